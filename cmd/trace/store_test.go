package main

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/kernbench/kernbench/graphs"
	"github.com/kernbench/kernbench/graphs/timing"
	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// TestStoreRebuildsRecords: the outputs of a trace whose records come
// from the store (Chrome trace, profile, summary) are those of the
// records themselves, for a prompt and generated tokens with and without
// flash attention.
func TestStoreRebuildsRecords(t *testing.T) {
	m, err := model.Load(testdata(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	be, err := cli.OpenBackend(cli.BackendOptions{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	for _, fa := range []bool{true, false} {
		p := model.DefaultContextParams()
		p.FlashAttn = fa
		mc, err := m.NewContext(be, p)
		if err != nil {
			t.Fatal(err)
		}
		var held []graphs.Record
		st := newStore()
		mc.SetRecorder(func(r graphs.Record) {
			held = append(held, r)
			st.Add(r)
		})
		toks := []int32{1, 300, 301, 302}
		if err := mc.Decode(model.SimpleBatch(toks, 0, 0)); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := mc.Decode(model.SimpleBatch([]int32{int32(400 + i)}, int32(len(toks)+i), 0)); err != nil {
				t.Fatal(err)
			}
		}
		mc.Close()
		a := timing.Trace{Records: held}
		b := timing.Trace{Stream: st.Records()}
		var ca, cb bytes.Buffer
		if err := a.WriteChrome(&ca); err != nil {
			t.Fatal(err)
		}
		if err := b.WriteChrome(&cb); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ca.Bytes(), cb.Bytes()) {
			t.Errorf("fa %v: Chrome traces differ:\n%.2000s\n%.2000s", fa, ca.String(), cb.String())
		}
		if fmt.Sprint(a.Summary()) != fmt.Sprint(b.Summary()) {
			t.Errorf("fa %v: summaries differ", fa)
		}
		pa, err1 := a.Profile()
		pb, err2 := b.Profile()
		if err1 != nil || err2 != nil || pa.String() != pb.String() {
			t.Errorf("fa %v: profiles differ (%v, %v)", fa, err1, err2)
		}
		if st.Len() != len(held) || len(st.infos) >= len(held)/2 {
			t.Errorf("fa %v: %d records kept as %d of %d, with %d distinct nodes", fa, st.Len(), st.Len(), len(held), len(st.infos))
		}
	}
}

// TestStoreTimes: times survive the store exactly, a wall time too long
// for an entry and a device time included.
func TestStoreTimes(t *testing.T) {
	x, _ := ops.NewTensor("x", quant.F32, 8, 2)
	y, _ := ops.Add(x, x)
	t0 := time.Unix(100, 5)
	in := []graphs.Record{
		{Step: graphs.Step{Node: y}, Start: t0, End: t0.Add(3 * time.Microsecond)},
		{Step: graphs.Step{Node: y}, Start: t0.Add(time.Second), End: t0.Add(11 * time.Second)},
		{Step: graphs.Step{Node: y}, Start: t0.Add(12 * time.Second), End: t0.Add(13 * time.Second), Device: 7 * time.Millisecond},
		{Step: graphs.Step{Node: y}, Start: t0.Add(5 * time.Second), End: t0.Add(6 * time.Second)}, // out of order
	}
	st := newStore()
	for _, r := range in {
		st.Add(r)
	}
	i := 0
	for r := range st.Records() {
		w := in[i]
		if !r.Start.Equal(w.Start) || !r.End.Equal(w.End) || r.Device != w.Device || r.Label() != w.Label() {
			t.Errorf("record %d: %v..%v device %v, want %v..%v device %v", i, r.Start, r.End, r.Device, w.Start, w.End, w.Device)
		}
		i++
	}
	if i != len(in) {
		t.Errorf("%d records, want %d", i, len(in))
	}
}
