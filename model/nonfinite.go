package model

import (
	"context"
	"fmt"
	"math"

	"github.com/kernbench/kernbench/graphs"
	"github.com/kernbench/kernbench/reference"
)

// A NonFinite is a node of a model's graph whose output holds a NaN or an
// infinity.
type NonFinite struct {
	Node  string // the node's name, such as "ffn_up-2"
	Op    string // its op label, such as "MUL_MAT(f32)"
	Layer int    // its layer, -1 for none
	Block string // its block ("attn", "ffn", "output"), if any
	Index int    // the index of the first non-finite element
	Value float64
}

// String describes the node: `node "ffn_up-2" (MUL_MAT(f32)) in layer 2,
// block ffn: NaN at element 17`.
func (n *NonFinite) String() string {
	s := fmt.Sprintf("node %q (%s)", n.Node, n.Op)
	switch {
	case n.Layer >= 0 && n.Block != "":
		s += fmt.Sprintf(" in layer %d, block %s", n.Layer, n.Block)
	case n.Layer >= 0:
		s += fmt.Sprintf(" in layer %d", n.Layer)
	case n.Block != "":
		s += " in block " + n.Block
	}
	return s + fmt.Sprintf(": %v at element %d", n.Value, n.Index)
}

// FirstNonFiniteLogit returns the index of the first NaN or infinity in
// logits, or -1 when every value is finite.
func FirstNonFiniteLogit(logits []float32) int {
	for i, v := range logits {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return i
		}
	}
	return -1
}

// A NonFiniteError says that a model's logits came out NaN or infinite,
// and which node of the graph first did.
type NonFiniteError struct {
	Where string  // which logits: "chunk 3, position 257", "token 12"
	Token int     // the vocabulary index of the first non-finite logit
	Value float32 // its value
	// Node is the first node whose output is not finite, found by
	// decoding the tokens again; nil when none was (Err says why, or the
	// second run gave finite values).
	Node *NonFinite
	Err  error
}

func (e *NonFiniteError) Error() string {
	s := fmt.Sprintf("%s: the logits are not finite (%v for token %d)", e.Where, e.Value, e.Token)
	switch {
	case e.Node != nil:
		return s + "; the first non-finite value comes from " + e.Node.String()
	case e.Err != nil:
		return s + fmt.Sprintf("; looking for the node that made it failed: %v", e.Err)
	}
	return s + "; decoding the tokens again, no node gave a non-finite value"
}

// CheckLogits returns nil when logits are finite, which is all it costs
// on that path. Otherwise it returns a *NonFiniteError for where, after
// decoding tokens (the sequence, from position 0, whose last logits these
// are) again on ctx with FindNonFinite to name the node at fault; ctx's
// cache is lost.
func CheckLogits(cx context.Context, ctx *Context, tokens []int32, logits []float32, where string) error {
	i := FirstNonFiniteLogit(logits)
	if i < 0 {
		return nil
	}
	e := &NonFiniteError{Where: where, Token: i, Value: logits[i]}
	e.Node, e.Err = FindNonFinite(cx, ctx, tokens)
	return e
}

// FindNonFinite clears ctx's cache and decodes tokens from position 0 as
// sequence 0 (in batches of the context's NBatch), reading the output of
// every node just after it is computed, and returns the first node whose
// output holds a NaN or an infinity, or nil when none does. Leaves
// (weights, inputs such as the attention mask, whose -Inf are on purpose)
// are not read. Its graphs run stepwise (graphs.Graph.Stepwise): on a GPU
// backend each node is computed alone and its output read back once the
// device is done with it, before the memory plan can give its bytes to a
// later node, so every backend names the same node.
func FindNonFinite(cx context.Context, ctx *Context, tokens []int32) (*NonFinite, error) {
	var found *NonFinite
	var readErr error
	cx, cancel := context.WithCancel(cx)
	defer cancel()
	ctx.stepwise = true
	defer func() { ctx.stepwise = false }()
	ctx.SetRecorder(func(r graphs.Record) {
		if found != nil || readErr != nil || r.Kind != graphs.KindCompute {
			return
		}
		v, err := reference.Read(r.Node)
		if err != nil {
			readErr = fmt.Errorf("reading node %s: %w", r.Node.Label(), err)
			cancel()
			return
		}
		for i, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				found = &NonFinite{Node: r.Node.Label(), Op: r.Label(), Layer: r.Layer, Block: r.Block, Index: i, Value: x}
				cancel()
				return
			}
		}
	})
	defer ctx.SetRecorder(nil)
	ctx.KV().Clear()
	nb := max(ctx.Params().NBatch, 1)
	for p0 := 0; p0 < len(tokens) && found == nil; p0 += nb {
		b := SimpleBatch(tokens[p0:min(p0+nb, len(tokens))], int32(p0), 0)
		err := ctx.DecodeContext(cx, b)
		if found != nil {
			break
		}
		if readErr != nil {
			return nil, readErr
		}
		if err != nil {
			return nil, err
		}
	}
	return found, nil
}
