package cli

import (
	"context"

	"github.com/kernbench/kernbench/model"
)

// CheckLogits returns nil when the logits of where are finite, else a
// *model.NonFiniteError naming the node behind them, found by decoding
// tokens again on ctx (model.CheckLogits: ctx's cache is lost).
func CheckLogits(cx context.Context, ctx *model.Context, tokens []int32, logits []float32, where string) error {
	return model.CheckLogits(cx, ctx, tokens, logits, where)
}
