package metal

import (
	"strings"
	"testing"

	"github.com/kernbench/kernbench/internal/shareddata"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// withMaxBuffer opens metal-emu with a maxBufferLength of n bytes.
func withMaxBuffer(t *testing.T, n int64) *Backend {
	t.Helper()
	t.Setenv(maxBufferEnv, "")
	b := emulated(t)
	b.dev.(*emuDevice).maxBuf = n
	return b
}

// TestHostViews binds tensors of a read-only host buffer larger than
// maxBufferLength: each through one view that holds it whole, views at
// most the limit, the same bytes as the host's; a tensor larger than a
// view is an error saying so.
func TestHostViews(t *testing.T) {
	const maxBuf = 2 * pageSlack // views of 32 KiB
	b := withMaxBuffer(t, maxBuf)
	limit := b.viewLimit()
	host := make([]byte, 5*limit+123)
	for i := range host {
		host[i] = byte(i * 7)
	}
	hb := ops.WrapHostBytesReadOnly(host)
	for _, tc := range []struct{ at, n int64 }{
		{0, 1000}, {limit - 100, 400}, {2 * limit, limit}, {int64(len(host)) - 4096, 4096}, {limit / 2, limit / 3}, {3*limit - 8, 16},
	} {
		x, err := ops.NewTensor("w", quant.I8, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		x.Buffer, x.Offset = hb, tc.at
		v, err := b.at(x)
		if err != nil {
			t.Fatalf("[%d, %d): %v", tc.at, tc.at+tc.n, err)
		}
		mem := v.buf.contents()
		if int64(len(mem)) > limit || v.off+tc.n > int64(len(mem)) {
			t.Errorf("[%d, %d): at %d of a view of %d bytes (at most %d)", tc.at, tc.at+tc.n, v.off, len(mem), limit)
			continue
		}
		if string(mem[v.off:v.off+tc.n]) != string(host[tc.at:tc.at+tc.n]) {
			t.Errorf("[%d, %d): the view holds other bytes", tc.at, tc.at+tc.n)
		}
	}
	if b.viewsMade < 3 {
		t.Errorf("%d views of a host buffer %d times the limit", b.viewsMade, len(host)/int(limit))
	}
	if n := b.res.Kept(); n != 1 {
		t.Errorf("%d kept host buffers, want 1", n)
	}
	big, _ := ops.NewTensor("big", quant.I8, limit+1)
	big.Buffer = hb
	if _, err := b.at(big); err == nil || !strings.Contains(err.Error(), "maxBufferLength") {
		t.Errorf("a tensor larger than a view: %v, want an error naming maxBufferLength", err)
	}
	if _, err := b.Alloc(maxBuf + 1); err == nil || !strings.Contains(err.Error(), "maxBufferLength") {
		t.Errorf("Alloc past maxBufferLength: %v", err)
	}
}

// TestModelAcrossViews decodes stories260K on metal-emu with a
// maxBufferLength of 256 KiB, its 1.2 MB of weights in several views, and
// gets the logits of one view.
func TestModelAcrossViews(t *testing.T) {
	m, err := model.Load(shareddata.Path(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	logits := func(b *Backend) []float32 {
		ctx, err := m.NewContext(b, model.ContextParams{NCtx: 32, NBatch: 8, NUBatch: 8, KVType: quant.F16, NSeqMax: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer ctx.Close()
		if err := ctx.Decode(model.SimpleBatch([]int32{1, 30, 60}, 0, 0)); err != nil {
			t.Fatal(err)
		}
		return append([]float32(nil), ctx.Logits(-1)...)
	}
	one := emulated(t)
	want := logits(one)
	if one.viewsMade != 1 {
		t.Errorf("%d views of the weights with the default maxBufferLength, want 1", one.viewsMade)
	}
	b := withMaxBuffer(t, 256<<10)
	got := logits(b)
	if b.viewsMade < 5 {
		t.Errorf("%d views of 1.2 MB of weights in buffers of at most 256 KiB", b.viewsMade)
	}
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("%d and %d logits", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("logit %d: %v across views, %v in one", i, got[i], want[i])
		}
	}
}

// TestEmuSettings: metal-emu's maxBufferLength and dispatch-order seed
// come from the environment, and bad values are errors naming them.
func TestEmuSettings(t *testing.T) {
	t.Setenv(maxBufferEnv, "0x40000")
	t.Setenv(seedEnv, "7")
	b := emulated(t)
	if d := b.dev.(*emuDevice); d.maxBuf != 0x40000 || d.seed != 7 {
		t.Errorf("maxBufferLength %d, seed %d, want %d and 7", d.maxBuf, d.seed, 0x40000)
	}
	for _, env := range []string{maxBufferEnv, seedEnv} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "many")
			if b, err := OpenEmulated(); err == nil || !strings.Contains(err.Error(), env) {
				if b != nil {
					b.Close()
				}
				t.Errorf("$%s=many: %v, want an error naming it", env, err)
			}
		})
	}
}
