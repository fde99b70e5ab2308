package gpu

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func TestCStructLayout(t *testing.T) {
	x, err := ops.NewTensor("x", quant.F32, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	for _, tc := range []struct {
		name  string
		build func(s *CStruct) *CStruct
		want  []byte
	}{
		{"empty", func(s *CStruct) *CStruct { return s }, []byte{0, 0, 0, 0}},
		{"int, padded to nothing", func(s *CStruct) *CStruct { return s.I32(-2) }, le.AppendUint32(nil, 0xfffffffe)},
		{"int then long: the long at 8, the whole 16", func(s *CStruct) *CStruct { return s.I32(1).I64(2) },
			le.AppendUint64(le.AppendUint32(le.AppendUint32(nil, 1), 0), 2)},
		{"long then float: padded to 16", func(s *CStruct) *CStruct { return s.I64(3).F32(1) },
			le.AppendUint32(le.AppendUint32(le.AppendUint64(nil, 3), 0x3f800000), 0)},
		{"tensor: ne then nb", func(s *CStruct) *CStruct { return s.Tensor(x) }, func() []byte {
			var b []byte
			for _, v := range []int64{3, 2, 1, 1, 4, 12, 24, 24} {
				b = le.AppendUint64(b, uint64(v))
			}
			return b
		}()},
	} {
		var s CStruct
		if got := tc.build(&s).Bytes(); !bytes.Equal(got, tc.want) {
			t.Errorf("%s: % x, want % x", tc.name, got, tc.want)
		}
	}
}

func TestTableSupports(t *testing.T) {
	tb := NewTable[int]("test")
	refuse := errors.New("no such shape")
	tb.Add(ops.OpAdd, func(*ops.Tensor) error { return nil }, 1)
	tb.Add(ops.OpMul, func(*ops.Tensor) error { return refuse }, 2)
	for _, tc := range []struct {
		op      ops.Op
		wantErr string
	}{
		{ops.OpAdd, ""},
		{ops.OpMul, "test: MUL: no such shape"},
		{ops.OpScale, "test: no kernel for SCALE"},
	} {
		err := tb.Supports(&ops.Tensor{Op: tc.op})
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("%v: %v", tc.op, err)
			}
			continue
		}
		if err == nil || err.Error() != tc.wantErr {
			t.Errorf("%v: %v, want %s", tc.op, err, tc.wantErr)
		}
	}
	if err := tb.Supports(&ops.Tensor{Op: ops.OpMul}); !errors.Is(err, refuse) {
		t.Errorf("the refusal is not wrapped: %v", err)
	}
	if err := tb.SupportsAll([]*ops.Tensor{{Op: ops.OpAdd}, {Op: ops.OpScale}}); err == nil || !strings.Contains(err.Error(), "SCALE") {
		t.Errorf("SupportsAll: %v", err)
	}
	if k, ok := tb.Kernel(ops.OpMul); !ok || k.Run != 2 {
		t.Errorf("Kernel(MUL) = %v, %v", k, ok)
	}
}

func TestCheckStatus(t *testing.T) {
	words := func(code, detail int32) []byte {
		return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, uint32(code)), uint32(detail))
	}
	for _, tc := range []struct {
		name      string
		words     []byte
		wantReset bool
		wantErr   string
	}{
		{"clean", words(0, 7), false, ""},
		{"bad id", words(1, -3), true, "code 1 detail -3"},
	} {
		reset := false
		err := CheckStatus(func(w []byte) error { copy(w, tc.words); return nil }, func() error { reset = true; return nil },
			func(code, detail int32) error { return errors.New("code " + itoa(code) + " detail " + itoa(detail)) })
		if reset != tc.wantReset {
			t.Errorf("%s: reset %v", tc.name, reset)
		}
		if got := errString(err); got != tc.wantErr {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.wantErr)
		}
	}
}

func itoa(v int32) string { return strconv.Itoa(int(v)) }

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestResident(t *testing.T) {
	released := map[int]int{}
	r := Resident[int]{Release: func(d int) { released[d]++ }}
	next := 0
	var copied []byte
	mk := func(p []byte) (int, error) { next++; copied = p; return next, nil }
	ro := ops.WrapHostBytesReadOnly(make8())
	rw := ops.WrapHostBytes(make8())
	for range 2 {
		d, at, err := r.Host(ro, 3, 2, mk, mk)
		if err != nil || d != 1 || at != 3 {
			t.Fatalf("read-only: %d, %d, %v; want the one copy, at 3", d, at, err)
		}
	}
	d, at, err := r.Host(rw, 3, 2, mk, mk)
	if err != nil || d != 2 || at != 0 {
		t.Fatalf("writable: %d, %d, %v; want a new copy of the extent, at 0", d, at, err)
	}
	if !bytes.Equal(copied, []byte{3, 4}) {
		t.Errorf("writable: copied % x, want the extent 03 04", copied)
	}
	r.AddTemp(9)
	r.ReleaseTemps()
	if released[1] != 0 || released[2] != 1 || released[9] != 1 {
		t.Errorf("after ReleaseTemps: %v", released)
	}
	if r.Kept() != 1 {
		t.Errorf("%d kept, want 1", r.Kept())
	}
	r.ReleaseAll()
	if released[1] != 1 || released[2] != 1 || r.Kept() != 0 {
		t.Errorf("after ReleaseAll: %v, %d kept", released, r.Kept())
	}
}

func make8() []byte { return []byte{0, 1, 2, 3, 4, 5, 6, 7} }

func TestStatusAt(t *testing.T) {
	w := []byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0xf9, 0xff, 0xff, 0xff}
	for _, tc := range []struct {
		i            int
		code, detail int32
	}{{0, 0, 0}, {1, 1, -7}} {
		if code, detail := StatusAt(w, tc.i); code != tc.code || detail != tc.detail {
			t.Errorf("slot %d: (%d, %d), want (%d, %d)", tc.i, code, detail, tc.code, tc.detail)
		}
	}
}
