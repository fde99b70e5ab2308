package graphs

import (
	"strconv"
	"strings"

	"github.com/kernbench/kernbench/ops"
)

// A scope places a node in a model: its layer (-1 for none) and the block
// of the layer or model it belongs to, such as "attn", "ffn" or "output".
type scope struct {
	layer int
	block string
}

// SetScope records that t belongs to layer (-1: to no layer) and block
// (may be empty). Model builders call it as they create nodes, before or
// after expanding them, so that dumps, traces and profiles can group a
// forward pass by layer; t need not be in the graph yet.
func (g *Graph) SetScope(t *ops.Tensor, layer int, block string) {
	if t == nil {
		return
	}
	if layer < 0 {
		layer = -1
	}
	if g.scopes == nil {
		g.scopes = map[*ops.Tensor]scope{}
	}
	g.scopes[t] = scope{layer: layer, block: block}
}

// Scope returns t's layer (-1 for none) and block: those given to SetScope,
// or else the layer its name carries (see LayerOf) and no block.
func (g *Graph) Scope(t *ops.Tensor) (layer int, block string) {
	if s, ok := g.scopes[t]; ok {
		return s.layer, s.block
	}
	return LayerOf(t.Name), ""
}

// LayerOf returns the layer a tensor name carries, or -1: "blk.N." as GGUF
// names weights ("blk.12.attn_q.weight"), or a "-N" suffix as llama.cpp
// names the nodes of layer N ("Qcur-12").
func LayerOf(name string) int {
	if rest, ok := strings.CutPrefix(name, "blk."); ok {
		if i := strings.IndexByte(rest, '.'); i > 0 {
			if n, ok := layerNumber(rest[:i]); ok {
				return n
			}
		}
	}
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if n, ok := layerNumber(name[i+1:]); ok {
			return n
		}
	}
	return -1
}

// layerNumber parses a layer number: decimal digits, at most 9 of them.
func layerNumber(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// OpLabel returns how traces and profiles name t's op: the op with the
// element type it works on, such as "MUL_MAT(q4_0)" (the type of the first
// source, which for MUL_MAT and GET_ROWS is the weight's) or
// "CPY(f32->f16)". A leaf is "NONE(type)".
func OpLabel(t *ops.Tensor) string {
	typ := t.Type.String()
	if len(t.Src) > 0 && t.Src[0] != nil {
		typ = t.Src[0].Type.String()
		if t.Op == ops.OpCpy {
			typ += "->" + t.Type.String()
		}
	}
	return t.Op.String() + "(" + typ + ")"
}
