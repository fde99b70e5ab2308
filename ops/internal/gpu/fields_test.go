package gpu

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// A blockField is one field of a block: its type, name and bytes
// [first, end).
type blockField struct {
	typ        string
	name       string
	first, end int64
}

var fieldEntry = regexp.MustCompile(`X\((\w+), (\w+), (\d+), (\d+)\)`)

// headerFields parses blocks.h's KB_IQ_FIELDS.
func headerFields(t *testing.T, src []byte) []blockField {
	t.Helper()
	s := string(src)
	i := strings.Index(s, "#define KB_IQ_FIELDS(X)")
	if i < 0 {
		t.Fatal("blocks.h defines no KB_IQ_FIELDS")
	}
	s = s[i:]
	if j := strings.Index(s, "\n\n"); j >= 0 {
		s = s[:j]
	}
	var out []blockField
	for _, m := range fieldEntry.FindAllStringSubmatch(s, -1) {
		f := blockField{typ: m[1], name: m[2]}
		f.first, _ = strconv.ParseInt(m[3], 10, 64)
		f.end, _ = strconv.ParseInt(m[4], 10, 64)
		out = append(out, f)
	}
	return out
}

var (
	layoutField = regexp.MustCompile(`^\s*//\s+\[(\d+):(\d+)\)\s+(\w+)`)
	layoutType  = regexp.MustCompile(`^\s*(\w+) Type = \d+`)
)

// layoutFields parses package quant's layout.go: the [first:end) name
// lines of the comment above each type.
func layoutFields(src string) map[string][]blockField {
	out := map[string][]blockField{}
	var cur []blockField
	for _, line := range strings.Split(src, "\n") {
		if m := layoutField.FindStringSubmatch(line); m != nil {
			f := blockField{name: m[3]}
			f.first, _ = strconv.ParseInt(m[1], 10, 64)
			f.end, _ = strconv.ParseInt(m[2], 10, 64)
			cur = append(cur, f)
		} else if m := layoutType.FindStringSubmatch(line); m != nil {
			for i := range cur {
				cur[i].typ = m[1]
			}
			out[m[1]] = cur
			cur = nil
		}
	}
	return out
}

// checkFields returns what in fields disagrees with quant's layouts
// (want, by type): every listed type must have exactly quant's fields,
// in order, covering its block's bytes.
func checkFields(fields []blockField, want map[string][]blockField) error {
	got := map[string][]blockField{}
	var order []string
	for _, f := range fields {
		if got[f.typ] == nil {
			order = append(order, f.typ)
		}
		got[f.typ] = append(got[f.typ], f)
	}
	var bad []string
	for _, typ := range order {
		w, ok := want[typ]
		if !ok || len(w) == 0 {
			bad = append(bad, typ+": quant's layout.go has no fields for it")
			continue
		}
		if fmt.Sprint(got[typ]) != fmt.Sprint(w) {
			bad = append(bad, fmt.Sprintf("%s: blocks.h %v, quant %v", typ, got[typ], w))
		}
		qt, err := quant.ParseType(strings.ToLower(typ))
		if err != nil {
			bad = append(bad, typ+": "+err.Error())
			continue
		}
		end := int64(0)
		for _, f := range got[typ] {
			if f.first != end {
				bad = append(bad, fmt.Sprintf("%s.%s starts at %d, after %d", typ, f.name, f.first, end))
			}
			end = f.end
		}
		if end != qt.TypeSize() {
			bad = append(bad, fmt.Sprintf("%s's fields end at byte %d of %d", typ, end, qt.TypeSize()))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("KB_IQ_FIELDS disagrees with package quant: %s", strings.Join(bad, "; "))
	}
	return nil
}

// TestFieldsMatchQuant checks blocks.h's KB_IQ_FIELDS against the byte
// layouts package quant documents (quant/layout.go) and its block sizes,
// for each of the twelve formats of issue 26; a changed offset fails.
func TestFieldsMatchQuant(t *testing.T) {
	hs, err := SharedHeaders()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../../../quant/layout.go")
	if err != nil {
		t.Fatal(err)
	}
	fields, want := headerFields(t, hs["blocks.h"]), layoutFields(string(src))
	types := map[string]bool{}
	for _, f := range fields {
		types[f.typ] = true
	}
	for _, typ := range []quant.Type{quant.MXFP4, quant.IQ4_NL, quant.IQ4_XS, quant.TQ1_0, quant.TQ2_0, quant.IQ2_XXS,
		quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S, quant.IQ1_S, quant.IQ1_M} {
		if !types[strings.ToUpper(typ.String())] {
			t.Errorf("KB_IQ_FIELDS lists no field of %v", typ)
		}
	}
	if err := checkFields(fields, want); err != nil {
		t.Error(err)
	}
	for i := range fields {
		bad := append([]blockField(nil), fields...)
		bad[i].first++
		if checkFields(bad, want) == nil {
			t.Errorf("a changed %+v passes", bad[i])
		}
	}
}
