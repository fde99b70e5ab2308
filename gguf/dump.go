package gguf

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"
)

// maxDumpString is the longest string value Dump prints in full.
const maxDumpString = 80

// Dump writes a readable summary of f to w: a header line, then one line
// per metadata entry (key, type, value; arrays and long strings
// abbreviated) and one per tensor (index, name, type, shape, offset in the
// data section, size in bytes), in aligned columns.
func Dump(w io.Writer, f *File) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "GGUF v%d: %d KV, %d tensors, alignment %d, data at offset %d\n",
		f.Version, len(f.KV), len(f.Tensors), f.Alignment, f.DataOffset)
	fmt.Fprintf(tw, "\nkey\ttype\tvalue\n")
	for _, kv := range f.KV {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", plain(kv.Key), kv.Value.TypeString(), dumpValue(kv.Value))
	}
	if len(f.Tensors) > 0 {
		fmt.Fprintf(tw, "\n#\tname\ttype\tshape\toffset\tbytes\n")
		for i, t := range f.Tensors {
			dims := make([]string, t.NDims)
			for j := range dims {
				dims[j] = strconv.FormatInt(t.Ne[j], 10)
			}
			fmt.Fprintf(tw, "%d\t%s\t%v\t[%s]\t%d\t%d\n", i, plain(t.Name), t.Type, strings.Join(dims, " "), t.Offset, t.Size)
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("gguf: dump: %w", err)
	}
	return nil
}

// dumpValue formats a value on one line, shortening long strings.
func dumpValue(v Value) string {
	if v.Type == TypeString {
		s, _ := v.payload.(string)
		if len(s) > maxDumpString {
			return strconv.Quote(prefix(s, maxDumpString)) + fmt.Sprintf("... (%d bytes)", len(s))
		}
	}
	return v.String()
}

// plain returns s, or s quoted when it holds characters (tabs, newlines,
// invalid UTF-8, ...) that would break the table.
func plain(s string) string {
	if s == "" {
		return `""`
	}
	for _, r := range s {
		if r == utf8.RuneError || r == '\t' || !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
