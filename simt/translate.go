package simt

// This file holds what both dialects' translations share: the kernel and
// parameter descriptions the translator produces, the translator with its
// token scanning (brace contexts, brackets, declarations, parameter lists)
// and its output, the padded shared-array rewrite, and the kernel table
// appended to every module. The dialects' rewrites are in
// translate_cuda.go and translate_metal.go.

import (
	"fmt"
	"strconv"
	"strings"
)

// A BindKind says how a Metal kernel parameter gets its value.
type BindKind int32

// Bind kinds, as kbsimt_abi.h numbers them.
const (
	BindNone        BindKind = 0
	BindBuffer      BindKind = 1 // [[buffer(i)]]
	BindThreadgroup BindKind = 2 // [[threadgroup(i)]]
	BindBuiltin     BindKind = 3 // an index attribute such as [[thread_position_in_grid]]
)

// Param describes one kernel parameter as the source declares it.
type Param struct {
	// Name is the parameter's name in the source.
	Name string
	// Decl is its declaration as written, attributes and address spaces
	// included ("device const float * src [[buffer(0)]]").
	Decl string
	// Bind and Index are how a Metal kernel's parameter is bound: the
	// buffer or threadgroup index, or for a built-in the attribute's
	// number (Builtin names it). CUDA parameters have BindNone.
	Bind    BindKind
	Index   int
	Builtin string
	// Size and Align are the parameter's bytes and alignment (CUDA), as
	// the compiled module reports them.
	Size, Align int
}

// kernelInfo is what the translator learns of one kernel.
type kernelInfo struct {
	Name   string // the name a launch finds it by
	Expr   string // the C++ expression naming the function
	File   string
	Line   int
	Params []Param
}

// A SourceError is a translation error at a place in a kernel source.
type SourceError struct {
	File string
	Line int
	Msg  string
}

func (e *SourceError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// translator rewrites the preprocessed source of one module token by
// token: deleting or replacing tokens keeps every line where it was, so
// the compiler's messages point at the original source.
type translator struct {
	src     string
	toks    []token
	repl    map[int]string // replacement text of a token ("" deletes)
	ctx     []int          // per token: the brace context it sits in
	scopes  []scope        // brace contexts; 0 is the file
	kernels []kernelInfo
	err     error
}

// scope is one brace context.
type scope struct {
	parent    int
	file      bool // a namespace, an extern "C" block or the file itself
	namespace bool
	externC   bool
}

func newTranslator(src string) (*translator, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	t := &translator{src: src, toks: toks, repl: map[int]string{}}
	t.scopes = []scope{{parent: -1, file: true}}
	t.ctx = make([]int, len(toks))
	cur := 0
	for i, tk := range toks {
		t.ctx[i] = cur
		switch t.text(i) {
		case "{":
			s := scope{parent: cur}
			switch {
			case i >= 2 && t.text(i-2) == "extern" && t.text(i-1) == `"C"`:
				s.file, s.externC = true, true
			case i >= 1 && t.text(i-1) == "namespace", i >= 2 && t.text(i-2) == "namespace" && toks[i-1].kind == tIdent:
				s.file, s.namespace = true, true
			}
			t.scopes = append(t.scopes, s)
			cur = len(t.scopes) - 1
			t.ctx[i] = cur
		case "}":
			if cur > 0 {
				cur = t.scopes[cur].parent
			}
		}
		_ = tk
	}
	return t, nil
}

func (t *translator) text(i int) string { return t.src[t.toks[i].start:t.toks[i].end] }

// live reports whether token i is user code the translator looks at.
func (t *translator) live(i int) bool {
	_, gone := t.repl[i]
	return !t.toks[i].system && !gone
}

func (t *translator) fail(i int, format string, args ...any) {
	if t.err == nil {
		tk := t.toks[min(i, len(t.toks)-1)]
		t.err = &SourceError{File: tk.file, Line: tk.line, Msg: fmt.Sprintf(format, args...)}
	}
}

// fileScope reports whether token i is outside every function and class.
func (t *translator) fileScope(i int) bool {
	for s := t.ctx[i]; s >= 0; s = t.scopes[s].parent {
		if !t.scopes[s].file {
			return false
		}
	}
	return true
}

// topLevel reports whether token i is in the global namespace, outside
// every function and class (extern "C" blocks aside): where a kernel must
// be for the kernel table to name it.
func (t *translator) topLevel(i int) bool {
	for s := t.ctx[i]; s >= 0; s = t.scopes[s].parent {
		if !t.scopes[s].file || t.scopes[s].namespace {
			return false
		}
	}
	return true
}

func (t *translator) inExternC(i int) bool {
	for s := t.ctx[i]; s >= 0; s = t.scopes[s].parent {
		if t.scopes[s].externC {
			return true
		}
	}
	return false
}

// declStart returns the first token of the declaration or statement that
// holds token i: the token after the previous ';', '{' or '}'.
func (t *translator) declStart(i int) int {
	depth := 0
	for j := i - 1; j >= 0; j-- {
		switch t.text(j) {
		case ")", "]":
			depth++
		case "(", "[":
			if depth == 0 {
				return j + 1
			}
			depth--
		case ";", "{", "}":
			if depth == 0 {
				return j + 1
			}
		}
	}
	return 0
}

// matching returns the index of the token closing the bracket at i.
func (t *translator) matching(i int) int {
	open := t.text(i)
	var close string
	switch open {
	case "(":
		close = ")"
	case "[":
		close = "]"
	case "{":
		close = "}"
	default:
		return -1
	}
	depth := 0
	for j := i; j < len(t.toks); j++ {
		switch t.text(j) {
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// statementEnd returns the index of the ';' ending the statement that
// token i is in, at bracket depth 0.
func (t *translator) statementEnd(i int) int {
	depth := 0
	for j := i; j < len(t.toks); j++ {
		switch t.text(j) {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth < 0 {
				return -1
			}
		case ";":
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// span returns the source text of tokens i..j (inclusive).
func (t *translator) span(i, j int) string {
	if i > j {
		return ""
	}
	return t.src[t.toks[i].start:t.toks[j].end]
}

// splitParams splits the tokens between parentheses open and close into
// parameters at top-level commas, returning [first, last] token pairs.
func (t *translator) splitParams(open, close int) [][2]int {
	var out [][2]int
	depth, angle := 0, 0
	first := open + 1
	for j := open + 1; j < close; j++ {
		switch t.text(j) {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case "<":
			angle++
		case ">":
			if angle > 0 {
				angle--
			}
		case ">>":
			angle = max(angle-2, 0)
		case ",":
			if depth == 0 && angle == 0 {
				out = append(out, [2]int{first, j - 1})
				first = j + 1
			}
		}
	}
	if first <= close-1 {
		out = append(out, [2]int{first, close - 1})
	}
	if len(out) == 1 && out[0][0] == out[0][1] && t.text(out[0][0]) == "void" {
		return nil
	}
	return out
}

// paramName is the last identifier of a parameter outside attributes and
// brackets.
func (t *translator) paramName(first, last int) string {
	name := ""
	depth := 0
	for j := first; j <= last; j++ {
		switch t.text(j) {
		case "(", "[":
			depth++
		case ")", "]":
			depth--
		default:
			if depth == 0 && t.toks[j].kind == tIdent {
				name = t.text(j)
			}
		}
	}
	return name
}

// output writes the translated source.
func (t *translator) output() string {
	var b strings.Builder
	b.Grow(len(t.src) + 4096)
	at := 0
	for i, tk := range t.toks {
		b.WriteString(t.src[at:tk.start])
		if r, ok := t.repl[i]; ok {
			b.WriteString(r)
		} else {
			b.WriteString(t.src[tk.start:tk.end])
		}
		at = tk.end
	}
	b.WriteString(t.src[at:])
	return b.String()
}

// deleteRange deletes tokens i..j.
func (t *translator) deleteRange(i, j int) {
	for k := i; k <= j; k++ {
		t.repl[k] = ""
	}
}

// paddedArray rewrites a function-scope shared array declaration
// (`__shared__ float buf[32][4];` or `threadgroup half tile[64];`, tokens
// start..end with kw the keyword and end the ';') into a thread_local
// kbs::shared_array, the array followed by a red zone that the checked
// runtime watches, and a reference of the array's name to it. It returns
// false, changing nothing, for any other form of declaration.
func (t *translator) paddedArray(kw, start, end int) bool {
	if t.fileScope(kw) {
		return false
	}
	lb, depth := -1, 0
scan:
	for j := kw + 1; j < end; j++ {
		switch t.text(j) {
		case "(", "<":
			depth++
		case ")", ">":
			depth--
		case "[":
			if depth == 0 {
				lb = j
				break scan
			}
		case ",", "=", "*", "&", "{":
			if depth == 0 {
				return false
			}
		}
	}
	if lb < 1 || t.toks[lb-1].kind != tIdent {
		return false
	}
	name := lb - 1
	for j := lb; j < end; {
		if t.text(j) != "[" {
			return false
		}
		m := t.matching(j)
		if m < 0 || m >= end {
			return false
		}
		j = m + 1
	}
	var prefix, typ []string
	for j := start; j < name; j++ {
		s := t.text(j)
		switch {
		case j == kw, s == "static", s == "thread_local":
			continue
		case (s == "alignas" || s == "__attribute__") && j+1 < name && t.text(j+1) == "(":
			m := t.matching(j + 1)
			if m < 0 || m >= name {
				return false
			}
			prefix = append(prefix, t.span(j, m))
			j = m
			continue
		}
		typ = append(typ, s)
	}
	if len(typ) == 0 {
		return false
	}
	n := t.text(name)
	t.repl[start] = fmt.Sprintf("%s static thread_local kbs::shared_array<%s %s> kbs_sh_%s; auto &%s = kbs_sh_%s.v; kbs::redzone(kbs_sh_%s);",
		strings.Join(prefix, " "), strings.Join(typ, " "), t.span(lb, end-1), n, n, n, n)
	t.deleteRange(start+1, end)
	return true
}

// ---------------------------------------------------------------------
// The kernel table.

const cudaEntry, metalEntry = 1, 2

// table writes the module's kernel table: the function the runtime looks
// up to find every kernel with its entry and parameter layout.
func (t *translator) table(dialect int) string {
	var b strings.Builder
	b.WriteString("\n# 1 \"<kbsimt kernel table>\"\n")
	for i, k := range t.kernels {
		if dialect != metalEntry {
			continue
		}
		fmt.Fprintf(&b, "static const kbs_bind kbs_binds_%d[] = {", i)
		for _, p := range k.Params {
			fmt.Fprintf(&b, "{%d, %d}, ", p.Bind, p.Index)
		}
		b.WriteString("{0, 0}};\n")
	}
	b.WriteString("extern \"C\" __attribute__((visibility(\"default\"))) const kbs_kernel_desc *kbs_kernel_table(int *n) {\n")
	if len(t.kernels) == 0 {
		b.WriteString("\t*n = 0;\n\treturn nullptr;\n}\n")
		return b.String()
	}
	b.WriteString("\tstatic const kbs_kernel_desc t[] = {\n")
	for i, k := range t.kernels {
		file := strconv.Quote(k.File)
		switch dialect {
		case cudaEntry:
			sig := fmt.Sprintf("kbs::cuda_sig<decltype(&%s)>", k.Expr)
			fmt.Fprintf(&b, "\t\t{%s, %d, %s::n, &kbs::cuda_entry<&%s>, %s::sizes, %s::aligns, nullptr, %s, %d, %d},\n",
				strconv.Quote(k.Name), cudaEntry, sig, k.Expr, sig, sig, file, k.Line, abiVersion)
		case metalEntry:
			fmt.Fprintf(&b, "\t\t{%s, %d, kbs::metal_sig<decltype(&%s)>::n, &kbs::metal_entry<&%s, kbs_binds_%d>, nullptr, nullptr, kbs_binds_%d, %s, %d, %d},\n",
				strconv.Quote(k.Name), metalEntry, k.Expr, k.Expr, i, i, file, k.Line, abiVersion)
		}
	}
	fmt.Fprintf(&b, "\t};\n\t*n = %d;\n\treturn t;\n}\n", len(t.kernels))
	return b.String()
}
