package cuda

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/internal/shareddata"
	"github.com/kernbench/kernbench/internal/testmodel"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// TestDecodedTokenDriverCalls decodes tokens of small synthetic models on
// cuda-emu (dense llama with flash attention on and off, MoE: Mixtral-style
// and gpt-oss, Mamba and Mamba-2) and counts the driver calls of the third
// token, after two that warm up the scratch memory and the graph: no
// allocation of device memory, and at most two waits for the device (the
// split's end, which reads the status words of the nodes that check their
// ids, and the read of the logits).
func TestDecodedTokenDriverCalls(t *testing.T) {
	b := emulated(t)
	vocab := shareddata.Path(t, "stories260K.gguf")
	for _, tc := range []struct {
		arch  string
		flash bool
	}{
		{"llama", false}, {"llama", true}, {"mixtral", false}, {"gpt-oss", true}, {"mamba", false}, {"mamba2", false},
	} {
		arch, flash := tc.arch, tc.flash
		t.Run(fmt.Sprintf("%s,flash=%v", arch, flash), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), arch+".gguf")
			if err := testmodel.Write(path, arch, vocab); err != nil {
				t.Fatal(err)
			}
			m, err := model.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			ctx, err := m.NewContext(b, model.ContextParams{NCtx: 32, NBatch: 8, NUBatch: 8, KVType: quant.F16, FlashAttn: flash, NSeqMax: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer ctx.Close()
			tokens := []int32{1, 30, 60}
			var got callCounts
			for i, tok := range tokens {
				before := b.api.counts()
				if err := ctx.Decode(model.SimpleBatch([]int32{tok}, int32(i), 0)); err != nil {
					t.Fatalf("token %d: %v", i, err)
				}
				got = b.api.counts().sub(before)
				t.Logf("token %d: %v", i, got)
			}
			if got[callLaunch] == 0 {
				t.Errorf("no launches counted for a decoded token: %v", got)
			}
			// Frees are not asserted: the garbage collector's cleanups
			// hand the backend memory of dropped buffers (another
			// context's) to free at any later call.
			if got[callAlloc] != 0 {
				t.Errorf("device memory allocated while decoding a token after warm-up: %v", got)
			}
			if n := got.syncs(); n > 2 {
				t.Errorf("%d waits for the device in one decoded token, want at most 2: %v", n, got)
			}
		})
	}
}

// TestStatusReadAtSplitEnd: GET_ROWS nodes queued by one ComputeGraph wait
// for nothing; the split's Synchronize reads their status words in one
// wait and returns the bad node's error, by name, and the words are clear
// for the next split.
func TestStatusReadAtSplitEnd(t *testing.T) {
	b := emulated(t)
	table, err := ops.NewTensor("table", quant.F32, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	good, bad := mustTensor(t, "good ids", 2), mustTensor(t, "bad ids", 2)
	for _, x := range []*ops.Tensor{table, good, bad} {
		if err := ops.AllocTensor(b, x, 0); err != nil {
			t.Fatal(err)
		}
	}
	writeI32 := func(x *ops.Tensor, v ...int32) {
		p := make([]byte, 4*len(v))
		for i, id := range v {
			binary.LittleEndian.PutUint32(p[4*i:], uint32(id))
		}
		if _, err := x.Buffer.WriteAt(p, x.Offset); err != nil {
			t.Fatal(err)
		}
	}
	writeI32(good, 0, 2)
	writeI32(bad, 1, 7)
	var nodes []*ops.Tensor
	for i, ids := range []*ops.Tensor{good, bad, good} {
		n, err := ops.GetRows(table, ids)
		if err != nil {
			t.Fatal(err)
		}
		n.Name = fmt.Sprintf("rows%d", i)
		if err := ops.AllocTensor(b, n, 0); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	for _, tc := range []struct {
		nodes   []*ops.Tensor
		wantErr string
	}{
		{nodes, "rows1 (GET_ROWS): GET_ROWS: row id 7 outside the table's 3 rows"},
		{[]*ops.Tensor{nodes[0], nodes[2]}, ""},
	} {
		before := b.api.counts()
		if err := b.ComputeGraph(tc.nodes); err != nil {
			t.Fatalf("ComputeGraph: %v", err)
		}
		if n := b.api.counts().sub(before).syncs(); n != 0 {
			t.Errorf("ComputeGraph of %d GET_ROWS waited %d times, want none", len(tc.nodes), n)
		}
		err := b.Synchronize()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("Synchronize after good ids: %v", err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("Synchronize: %v, want an error with %q", err, tc.wantErr)
		}
		if n := b.api.counts().sub(before).syncs(); n != 1 {
			t.Errorf("the split waited %d times, want 1", n)
		}
	}
}

func mustTensor(t *testing.T, name string, n int64) *ops.Tensor {
	t.Helper()
	x, err := ops.NewTensor(name, quant.I32, n)
	if err != nil {
		t.Fatal(err)
	}
	return x
}
