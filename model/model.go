// Package model runs language models as graphs of ops: it reads
// hyperparameters and weights from a GGUF file, keeps a memory of the
// decoded tokens by sequence (a KV cache of cells with positions and
// sequence sets, or recurrent states; package kvcache), splits batches
// into micro-batches, builds one graph per micro-batch (package graphs)
// and runs it on an ops.Backend, and exposes the logits.
//
// general.architecture chooses the graph (arch.go):
//
//   - llama: llama.cpp's build_llama. GET_ROWS embeddings; per layer
//     RMS_NORM times the norm weight, Q/K/V projections (MUL_MAT), ROPE in
//     normal mode on Q and K, K and V stored into the cache by CPY into
//     views of the cache tensors, attention over the cached cells (by
//     FLASH_ATTN_EXT, or by MUL_MAT, SOFT_MAX and MUL_MAT), the output
//     projection and a residual ADD, then RMS_NORM, a SwiGLU feed-forward
//     (SWIGLU of gate and up, then down) and a residual ADD; finally
//     RMS_NORM, the output projection, and logits for the tokens that ask.
//     With {arch}.expert_count > 0 (Mixtral) the feed-forward is a mixture
//     of experts: router MUL_MAT, top-k by ARGSORT, weights by SOFT_MAX,
//     MUL_MAT_ID for gate, up and down over the chosen experts, and their
//     weighted sum.
//   - gpt-oss: the same attention with Q/K/V/O biases, per-head sinks in
//     SOFT_MAX/FLASH_ATTN_EXT, NeoX rope with YaRN, and sliding-window
//     layers (the even ones) served by a second, smaller KV cache whose
//     cells are reused once they leave the window; a mixture of experts
//     with biases and the clamped SwiGLU (SWIGLU_OAI).
//   - mamba, mamba2: Mamba-1's and Mamba-2's selective state-space blocks
//     (SSM_CONV, SSM_SCAN; Mamba-2 with heads, grouped B and C and a
//     grouped RMS norm) over a recurrent state per sequence instead of a
//     KV cache.
//
// The context's memory (Context.KV) is a KV cache for attention models
// (a second, smaller store for sliding-window layers; one stream for all
// sequences or one per sequence with ContextParams.NonUnified) or
// recurrent states for Mamba (a cell per sequence), with llama.cpp's
// sequence operations, context shifts (SeqAdd, SeqDiv: the cached keys
// are re-roped) and defragmentation.
//
// ReferenceForward computes the same models in float64 with plain loops,
// without a cache, as the oracle the runner is tested against.
//
// Where the runner differs from llama.cpp on purpose: K and V share one
// cache type, and a Q8_0 cache needs flash attention; a token of several
// sequences needs a unified KV cache (a non-unified or recurrent memory
// refuses it: decode it once and SeqCp); a micro-batch's K/V rows are
// stored by a CPY per run of consecutive cells (there is no SET_ROWS);
// re-roping shifted keys does not apply YaRN's magnitude factor a second
// time; recurrent states are f32 whatever the cache type; a failed
// micro-batch of a recurrent model leaves its sequences' states undefined
// (their positions are restored).
package model

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/kernbench/kernbench/gguf"
)

// Model is a loaded model: hyperparameters and weights. Weights of a
// model from Load live in the memory-mapped file, so the model must stay
// open (not Closed) while any Context uses it.
type Model struct {
	Hparams Hparams
	Weights Weights

	file   *gguf.File
	closer io.Closer
	closed atomic.Bool
}

// New returns a model from hyperparameters and weights already in memory
// (for synthetic models), after checking them against each other.
func New(h Hparams, w Weights) (*Model, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	if w.Output == nil {
		w.Output = w.TokEmbd
	}
	if err := w.Validate(h); err != nil {
		return nil, err
	}
	return &Model{Hparams: h, Weights: w}, nil
}

// errClosed is returned by contexts of a closed model.
var errClosed = errors.New("model: the model is closed")

// Close releases the model's file. Contexts of the model fail afterwards.
func (m *Model) Close() error {
	if m.closed.Swap(true) || m.closer == nil {
		return nil
	}
	if err := m.closer.Close(); err != nil {
		return fmt.Errorf("model: close: %w", err)
	}
	return nil
}
