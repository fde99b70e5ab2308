package ggmlperf

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Enums are the numbers one ggml version gives its ops: enum ggml_op
// (without the GGML_OP_ prefix, such as "MUL_MAT"), enum ggml_unary_op
// ("SILU") and enum ggml_glu_op ("SWIGLU").
type Enums struct {
	Ops   map[string]int
	Unary map[string]int
	GLU   map[string]int
}

// maxHeaderBytes bounds the header ReadEnums reads.
const maxHeaderBytes = 16 << 20

// ReadEnums reads the op enums from ggml.h.
func ReadEnums(r io.Reader) (Enums, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxHeaderBytes+1))
	if err != nil {
		return Enums{}, fmt.Errorf("ggmlperf: read ggml.h: %w", err)
	}
	if len(b) > maxHeaderBytes {
		return Enums{}, fmt.Errorf("ggmlperf: ggml.h larger than %d bytes", maxHeaderBytes)
	}
	src := stripComments(string(b))
	var e Enums
	for _, x := range []struct {
		name, prefix string
		dst          *map[string]int
	}{
		{"ggml_op", "GGML_OP_", &e.Ops},
		{"ggml_unary_op", "GGML_UNARY_OP_", &e.Unary},
		{"ggml_glu_op", "GGML_GLU_OP_", &e.GLU},
	} {
		m, err := parseEnum(src, x.name, x.prefix)
		if err != nil {
			return Enums{}, err
		}
		*x.dst = m
	}
	return e, nil
}

// ReadEnumsFile reads the op enums from the ggml.h at path.
func ReadEnumsFile(path string) (Enums, error) {
	f, err := os.Open(path)
	if err != nil {
		return Enums{}, fmt.Errorf("ggmlperf: %w", err)
	}
	defer f.Close()
	e, err := ReadEnums(f)
	if err != nil {
		return Enums{}, fmt.Errorf("%w (%s)", err, path)
	}
	return e, nil
}

// FindHeader looks for the ggml.h of the source tree a test-backend-ops
// binary was built in: include/ggml.h (a ggml checkout) or
// ggml/include/ggml.h (a llama.cpp checkout) in the binary's folder or
// any folder above it.
func FindHeader(binary string) (string, error) {
	abs, err := filepath.Abs(binary)
	if err != nil {
		return "", fmt.Errorf("ggmlperf: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	dir := filepath.Dir(abs)
	for {
		for _, rel := range []string{"include/ggml.h", "ggml/include/ggml.h"} {
			p := filepath.Join(dir, rel)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p, nil
			}
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("ggmlperf: no include/ggml.h or ggml/include/ggml.h in any folder above %s; name the ggml.h the binary was built from", binary)
		}
		dir = up
	}
}

// stripComments removes C comments, keeping line structure.
func stripComments(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "//"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return b.String()
			}
			i += j - 1
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return b.String()
			}
			b.WriteString(strings.Repeat("\n", strings.Count(s[i:i+2+j], "\n")))
			i += j + 3
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// parseEnum returns the members of "enum name { ... }" that start with
// prefix, without it, numbered as C numbers them.
func parseEnum(src, name, prefix string) (map[string]int, error) {
	start := -1
	for off := 0; ; {
		i := strings.Index(src[off:], "enum "+name)
		if i < 0 {
			break
		}
		i += off
		rest := strings.TrimLeft(src[i+len("enum "+name):], " \t\r\n")
		if strings.HasPrefix(rest, "{") {
			start = len(src) - len(rest) + 1
			break
		}
		off = i + 1
	}
	if start < 0 {
		return nil, fmt.Errorf("ggmlperf: ggml.h has no enum %s", name)
	}
	end := strings.IndexByte(src[start:], '}')
	if end < 0 {
		return nil, fmt.Errorf("ggmlperf: enum %s in ggml.h has no closing brace", name)
	}
	out := map[string]int{}
	next := 0
	for _, item := range strings.Split(src[start:start+end], ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		ident, val, hasVal := strings.Cut(item, "=")
		ident = strings.TrimSpace(ident)
		if hasVal {
			v, err := strconv.ParseInt(strings.TrimSpace(val), 0, 32)
			if err != nil {
				return nil, fmt.Errorf("ggmlperf: enum %s: %s = %q is not a number this reader understands", name, ident, strings.TrimSpace(val))
			}
			next = int(v)
		}
		if !isIdent(ident) {
			return nil, fmt.Errorf("ggmlperf: enum %s: %q is not an enumerator", name, ident)
		}
		if s, ok := strings.CutPrefix(ident, prefix); ok {
			out[s] = next
		}
		next++
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("ggmlperf: enum %s in ggml.h has no %s members", name, prefix)
	}
	return out, nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		ok := c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9'
		if !ok {
			return false
		}
	}
	return true
}
