package gguf

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// Small hand-made files whose fields the builder records, for truncation.
func smallFiles() map[string]*builder {
	files := map[string]*builder{}

	// Three KVs (string, uint32 array, string array), two tensors.
	b := (&builder{}).header(3, 2, 3)
	b.str("key", "general.architecture").u32("value type", uint32(TypeString)).str("string", "llama")
	b.str("key", "a").u32("value type", uint32(TypeArray)).u32("array element type", uint32(TypeUint32)).
		u64("array count", 3).raw("array of 3 uint32", make([]byte, 12))
	b.str("key", "s").u32("value type", uint32(TypeArray)).u32("array element type", uint32(TypeString)).
		u64("array count", 2).str("array of 2 strings|string", "x").str("array of 2 strings|string", "yz")
	b.tensor("t0", uint32(quant.F32), 0, 4, 2).tensor("t1", uint32(quant.Q4_0), 32, 32)
	b.padTo(32).zeros(32 + 18).padTo(32)
	files["full"] = b

	b = (&builder{}).header(3, 0, 1)
	b.str("key", "general.architecture").u32("value type", uint32(TypeString)).str("string", "llama")
	files["one string"] = b

	b = (&builder{}).header(2, 0, 1)
	b.str("key", "tokenizer.ggml.tokens").u32("value type", uint32(TypeArray)).
		u32("array element type", uint32(TypeString)).u64("array count", 3).
		str("array of 3 strings|string", "<unk>").str("array of 3 strings|string", "<s>").str("array of 3 strings|string", "</s>")
	files["string array"] = b

	b = (&builder{}).header(3, 0, 1)
	b.str("key", "nested.array.of.arrays").u32("value type", uint32(TypeArray)).
		u32("array element type", uint32(TypeArray)).u64("array count", 2).
		u32("array of 2 arrays|array element type", uint32(TypeInt16)).u64("array of 2 arrays|array count", 1).
		raw("array of 2 arrays|array of 1 int16", []byte{1, 0}).
		u32("array of 2 arrays|array element type", uint32(TypeBool)).u64("array of 2 arrays|array count", 2).
		raw("array of 2 bool", []byte{1, 0})
	files["nested"] = b

	b = (&builder{}).header(3, 1, 0)
	b.tensor("blk.0.attn_q.weight", uint32(quant.F16), 0, 8, 2, 3)
	b.padTo(32).zeros(96)
	files["one tensor"] = b
	return files
}

// TestTruncation cuts every small file at every length: each prefix must
// be refused with ErrTruncated, and a cut at (or just inside) a field
// must name that field, unless the header's counts already show the
// prefix too short to hold the KVs and tensors they announce.
func TestTruncation(t *testing.T) {
	for name, b := range smallFiles() {
		full := b.b
		f, err := Parse(full)
		if err != nil {
			t.Fatalf("%s: the uncut file does not parse: %v", name, err)
		}
		nkv, nt := len(f.KV), len(f.Tensors)
		// Cuts from the end of the infos to the end of the last tensor's
		// data leave a tensor short; cuts after it only drop padding,
		// which is allowed.
		infosEnd, dataEnd := len(full), len(full)
		if nt > 0 {
			infosEnd, dataEnd = int(f.DataOffset), 0
			for _, ti := range f.Tensors {
				dataEnd = max(dataEnd, int(f.DataOffset+ti.Offset+ti.Size))
			}
		}
		want := map[int]string{}
		for i, fd := range b.fields {
			end := len(full)
			if i+1 < len(b.fields) {
				end = b.fields[i+1].off
			}
			want[fd.off] = fd.name
			if end-fd.off > 1 {
				want[fd.off+1] = fd.name
			}
		}
		for cut := range len(full) {
			_, err := Parse(full[:cut])
			if cut >= dataEnd {
				if err != nil {
					t.Errorf("%s cut at %d, after the data: %v", name, cut, err)
				}
				continue
			}
			if err == nil {
				t.Errorf("%s cut at %d of %d: parsed", name, cut, len(full))
				continue
			}
			if !errors.Is(err, ErrTruncated) {
				t.Errorf("%s cut at %d: %v does not wrap ErrTruncated", name, cut, err)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Errorf("%s cut at %d: %T is not a *FormatError", name, cut, err)
			}
			msg := err.Error()
			switch {
			case cut >= 24 && cut-24 < nkv*minKVBytes+nt*minTensorBytes:
				if !strings.Contains(msg, "header claims") {
					t.Errorf("%s cut at %d: %q, want the header count check", name, cut, msg)
				}
			case cut >= infosEnd:
				if !strings.Contains(msg, "runs past the end of the file") {
					t.Errorf("%s cut at %d: %q, want a tensor running past the end", name, cut, msg)
				}
			case want[cut] != "":
				// Inside an array, the array's own check on its count
				// may fire first: "a|b" accepts either.
				ok := false
				for _, w := range strings.Split(want[cut], "|") {
					ok = ok || strings.Contains(msg, w)
				}
				if !ok {
					t.Errorf("%s cut at %d: %q does not name the field %q", name, cut, msg, want[cut])
				}
			}
		}
	}
}

// corruptCase is a malformed file and what its error must say.
type corruptCase struct {
	name string
	b    []byte
	want []string // substrings of the error
	is   error    // an error it must wrap, or nil
}

func corruptCases() []corruptCase {
	kvFile := func(key string, typ ValueType, value ...func(*builder)) []byte {
		b := (&builder{}).header(3, 0, 1)
		b.str("key", key).u32("value type", uint32(typ))
		for _, v := range value {
			v(b)
		}
		return b.b
	}
	// tensorFile has the given KVs, one tensor and enough data for it.
	tensorFile := func(kvs func(*builder) int, typ uint32, off uint64, dataBytes int, ne ...uint64) []byte {
		pre := &builder{}
		n := 0
		if kvs != nil {
			n = kvs(pre)
		}
		b := (&builder{}).header(3, 1, uint64(n))
		b.b = append(b.b, pre.b...)
		b.tensor("blk.0.attn_q.weight", typ, off, ne...)
		return b.padTo(32).zeros(dataBytes).b
	}
	twoTensors := func(off0, off1 uint64, data int) []byte {
		b := (&builder{}).header(3, 2, 0)
		b.tensor("a", uint32(quant.F32), off0, 16).tensor("b", uint32(quant.F32), off1, 16)
		return b.padTo(32).zeros(data).b
	}
	align := func(typ ValueType, v uint32) func(*builder) int {
		return func(b *builder) int {
			b.str("key", KeyAlignment).u32("value type", uint32(typ)).u32("value", v)
			return 1
		}
	}
	nested := func(depth int) []byte {
		b := (&builder{}).header(3, 0, 1)
		b.str("key", "deep").u32("value type", uint32(TypeArray))
		for range depth - 1 {
			b.u32("elem", uint32(TypeArray)).u64("count", 1)
		}
		return b.u32("elem", uint32(TypeUint8)).u64("count", 1).u8("v", 7).b
	}
	return []corruptCase{
		{"empty", nil, []string{"magic needs 4 bytes"}, ErrTruncated},
		{"bad magic", []byte("GGML\x03\x00\x00\x00"), []string{`"GGML" is not "GGUF"`}, nil},
		{"version 0", (&builder{}).header(0, 0, 0).b, []string{"version 0", "2 and 3"}, ErrVersion},
		{"version 1", (&builder{}).header(1, 0, 0).b, []string{"version 1", "2 and 3"}, ErrVersion},
		{"version 4", (&builder{}).header(4, 0, 0).b, []string{"version 4"}, ErrVersion},
		{"big-endian", (&builder{}).header(3<<24, 0, 0).b, []string{"big-endian"}, ErrVersion},
		{"huge tensor count", (&builder{}).header(3, math.MaxUint64, 0).b, []string{"header claims 18446744073709551615 tensors"}, ErrTruncated},
		{"huge KV count", (&builder{}).header(3, 0, 1<<61).zeros(100).b, []string{"header claims 0 tensors and 2305843009213693952 KV"}, ErrTruncated},
		{"huge key length", (&builder{}).header(3, 0, 1).u64("len", math.MaxUint64).zeros(20).b,
			[]string{"KV 0 at offset 24", "key length 18446744073709551615 runs past the end of the file (20 bytes remain)"}, ErrTruncated},
		{"huge string length", kvFile("k", TypeString, func(b *builder) { b.u64("len", 1<<40).zeros(4) }),
			[]string{`KV 0 ("k")`, "string length 1099511627776 runs past the end"}, ErrTruncated},
		{"huge array count", kvFile("k", TypeArray, func(b *builder) { b.u32("e", uint32(TypeFloat32)).u64("n", 1<<62).zeros(8) }),
			[]string{`KV 0 ("k")`, "array of 4611686018427387904 float32 needs 18446744073709551616 bytes but only 8 remain"}, ErrTruncated},
		{"huge array count overflowing", kvFile("k", TypeArray, func(b *builder) { b.u32("e", uint32(TypeUint64)).u64("n", math.MaxUint64/4).zeros(8) }),
			[]string{"array of 4611686018427387903 uint64 needs 36893488147419103224 bytes but only 8 remain"}, ErrTruncated},
		{"huge string array count", kvFile("k", TypeArray, func(b *builder) { b.u32("e", uint32(TypeString)).u64("n", 1<<50).zeros(64) }),
			[]string{"array of 1125899906842624 strings needs at least"}, ErrTruncated},
		{"huge array of arrays count", kvFile("k", TypeArray, func(b *builder) { b.u32("e", uint32(TypeArray)).u64("n", 1<<50).zeros(64) }),
			[]string{"array of 1125899906842624 arrays needs at least"}, ErrTruncated},
		{"string element too long", kvFile("k", TypeArray, func(b *builder) {
			b.u32("e", uint32(TypeString)).u64("n", 2).str("s", "ok").u64("len", 100).zeros(8)
		}), []string{`KV 0 ("k"): element 1 at offset`, "string length 100 runs past"}, ErrTruncated},
		{"bad value type", kvFile("k", 13, func(b *builder) { b.zeros(8) }), []string{`KV 0 ("k") at offset 33`, "unknown value type 13"}, nil},
		{"bad array element type", kvFile("k", TypeArray, func(b *builder) { b.u32("e", 99).u64("n", 0) }), []string{"unknown array element type 99"}, nil},
		{"bad bool", kvFile("k", TypeBool, func(b *builder) { b.u8("v", 2) }), []string{"bool value is 2"}, nil},
		{"bad bool in array", kvFile("k", TypeArray, func(b *builder) { b.u32("e", uint32(TypeBool)).u64("n", 3).raw("v", []byte{1, 0, 7}) }),
			[]string{"element 2: bool value is 7"}, nil},
		{"nesting too deep", nested(MaxArrayDepth + 1), []string{"nest deeper than 8"}, nil},
		{"duplicate key", func() []byte {
			b := (&builder{}).header(3, 0, 2).kvU32("k", 1).kvU32("k", 2)
			return b.b
		}(), []string{`KV 1 ("k") at offset 41`, "duplicate key (first at KV 0)"}, nil},
		{"alignment not a power of two", tensorFile(align(TypeUint32, 48), uint32(quant.F32), 0, 16, 4),
			[]string{`KV 0 ("general.alignment")`, "the alignment is 48; it must be a power of two"}, nil},
		{"alignment zero", tensorFile(align(TypeUint32, 0), uint32(quant.F32), 0, 16, 4), []string{"the alignment is 0"}, nil},
		{"alignment of another type", tensorFile(align(TypeInt32, 64), uint32(quant.F32), 0, 16, 4),
			[]string{"the alignment has type int32; it must be uint32"}, nil},
		{"n_dims 0", tensorFile(nil, uint32(quant.F32), 0, 16), []string{`tensor 0 ("blk.0.attn_q.weight")`, "n_dims is 0; it must be 1 to 4"}, nil},
		{"n_dims 5", tensorFile(nil, uint32(quant.F32), 0, 64, 1, 1, 1, 1, 4), []string{"n_dims is 5"}, nil},
		{"ne zero", tensorFile(nil, uint32(quant.F32), 0, 16, 4, 0), []string{"ne[1] is 0"}, nil},
		{"ne overflowing", tensorFile(nil, uint32(quant.F32), 0, 16, 1<<40, 1<<40), []string{"shape [1099511627776 1099511627776] has more than"}, nil},
		{"ne negative as int64", tensorFile(nil, uint32(quant.F32), 0, 16, 1<<63), []string{"ne[0] is 9223372036854775808"}, nil},
		{"unknown tensor type", tensorFile(nil, 99, 0, 16, 4), []string{"unsupported tensor type 99 (unknown)"}, nil},
		{"unsupported ggml type", tensorFile(nil, 27, 0, 16, 256), []string{"unsupported tensor type 27 (ggml's i64)"}, nil},
		{"row not a multiple of the block", tensorFile(nil, uint32(quant.Q4_0), 0, 64, 48, 2), []string{"shape [48 2]", "block size"}, quant.ErrRowLength},
		{"offset not aligned", tensorFile(nil, uint32(quant.F32), 16, 64, 4), []string{"data offset 16 is not a multiple of the alignment 32"}, nil},
		{"offset huge", tensorFile(nil, uint32(quant.F32), 1<<63, 64, 4), []string{"data offset 9223372036854775808 is out of range"}, nil},
		{"offset far past the end", tensorFile(nil, uint32(quant.F32), 1<<62, 64, 4),
			[]string{`tensor 0 ("blk.0.attn_q.weight") data at offset`, "[4611686018427388000, 4611686018427388016) runs past the end of the file (160 bytes)"}, ErrTruncated},
		{"tensor out of range", tensorFile(nil, uint32(quant.F32), 0, 60, 4, 4),
			[]string{`tensor 0 ("blk.0.attn_q.weight") data at offset 96: [96, 160) runs past the end of the file (156 bytes)`}, ErrTruncated},
		{"tensor data missing", tensorFile(nil, uint32(quant.F32), 0, 0, 4), []string{"runs past the end of the file"}, ErrTruncated},
		{"duplicate tensor", func() []byte {
			b := (&builder{}).header(3, 2, 0).tensor("w", 0, 0, 4).tensor("w", 0, 32, 4)
			return b.padTo(32).zeros(64).b
		}(), []string{`tensor 1 ("w")`, "duplicate tensor name (first at tensor 0)"}, nil},
		{"overlapping tensors", twoTensors(32, 0, 96), []string{`tensor 0 ("a") data`, `overlaps tensor 1 ("b")`}, nil},
		{"identical offsets", twoTensors(0, 0, 96), []string{"overlaps"}, nil},
	}
}

func TestCorrupt(t *testing.T) {
	for _, c := range corruptCases() {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse(c.b)
			if err == nil {
				t.Fatalf("parsed: %d KV, %d tensors", len(f.KV), len(f.Tensors))
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %q does not wrap %v", err, c.is)
			}
			if !strings.HasPrefix(err.Error(), "gguf: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

// TestAccepted lists layouts that are unusual but valid.
func TestAccepted(t *testing.T) {
	nested := func(depth int) []byte {
		b := (&builder{}).header(3, 0, 1)
		b.str("key", "deep").u32("value type", uint32(TypeArray))
		for range depth - 1 {
			b.u32("elem", uint32(TypeArray)).u64("count", 1)
		}
		return b.u32("elem", uint32(TypeUint8)).u64("count", 1).u8("v", 7).b
	}
	gap := (&builder{}).header(3, 2, 0).tensor("a", 0, 64, 4).tensor("b", 0, 0, 4)
	gap.padTo(32).zeros(96)
	small := (&builder{}).header(2, 1, 1)
	small.str("key", KeyAlignment).u32("t", uint32(TypeUint32)).u32("v", 1)
	small.tensor("x", uint32(quant.F16), 0, 3).zeros(6)

	for _, c := range []struct {
		name  string
		b     []byte
		check func(*File) error
	}{
		{"nesting at the limit", nested(MaxArrayDepth), func(f *File) error {
			v := f.KV[0].Value
			for range MaxArrayDepth - 1 {
				v = v.Index(0)
			}
			if v.ElemType != TypeUint8 || v.Index(0).Any() != uint8(7) {
				return fmt.Errorf("innermost array %v", v)
			}
			return nil
		}},
		{"gaps and tensors out of order", gap.b, func(f *File) error {
			if f.Tensors[0].Offset != 64 || f.Tensors[1].Offset != 0 {
				return fmt.Errorf("offsets %d %d", f.Tensors[0].Offset, f.Tensors[1].Offset)
			}
			return nil
		}},
		{"v2 with alignment 1", small.b, func(f *File) error {
			if f.Version != 2 || f.Alignment != 1 || f.DataOffset != int64(len(small.b)-6) {
				return fmt.Errorf("v%d alignment %d data at %d", f.Version, f.Alignment, f.DataOffset)
			}
			return nil
		}},
		{"no KVs, no tensors", (&builder{}).header(3, 0, 0).b, func(f *File) error {
			if f.Arch() != "" || f.DataOffset != 32 {
				return fmt.Errorf("arch %q, data at %d", f.Arch(), f.DataOffset)
			}
			return nil
		}},
	} {
		f, err := Parse(c.b)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if err := c.check(f); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
