package simt

import (
	"fmt"
	"slices"
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

// metalBuiltins numbers Metal's index attributes as kbsimt_abi.h does.
var metalBuiltins = map[string]int{
	"thread_position_in_grid":          1,
	"thread_position_in_threadgroup":   2,
	"threadgroup_position_in_grid":     3,
	"threads_per_threadgroup":          4,
	"threadgroups_per_grid":            5,
	"threads_per_grid":                 6,
	"thread_index_in_threadgroup":      7,
	"thread_index_in_simdgroup":        8,
	"simdgroup_index_in_threadgroup":   9,
	"threads_per_simdgroup":            10,
	"simdgroups_per_threadgroup":       11,
	"thread_index_in_quadgroup":        12,
	"quadgroup_index_in_threadgroup":   13,
	"thread_execution_width":           14,
	"dispatch_threads_per_threadgroup": 4,
}

// stdAttributes are the standard C++ attributes a Metal source may keep.
var stdAttributes = []string{"maybe_unused", "likely", "unlikely", "nodiscard", "fallthrough", "noreturn", "deprecated", "gnu"}

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

// ---------------------------------------------------------------------
// CUDA.

// translateCUDA rewrites a preprocessed CUDA source for the emulator:
// __global__ goes (its extern "C" kernels are listed), __shared__
// variables become thread_local (per block, since a block's threads share
// one OS thread), extern __shared__ arrays point at the block's dynamic
// shared memory, and inline assembly is refused.
func translateCUDA(src string) (string, []kernelInfo, error) {
	t, err := newTranslator(src)
	if err != nil {
		return "", nil, err
	}
	for i := range t.toks {
		if !t.live(i) || t.toks[i].kind != tIdent {
			continue
		}
		switch t.text(i) {
		case "__global__":
			t.cudaKernel(i)
		case "__shared__":
			t.cudaShared(i)
		case "asm", "__asm__", "__asm":
			t.fail(i, "inline assembly is not emulated: put it in a __device__ function with an emulator implementation under #ifdef __KBSIMT__")
		}
		if t.err != nil {
			return "", nil, t.err
		}
	}
	return t.output() + t.table(cudaEntry), t.kernels, nil
}

func (t *translator) cudaKernel(i int) {
	t.repl[i] = ""
	start := t.declStart(i)
	externC := t.inExternC(i)
	for j := start; j < i; j++ {
		switch t.text(j) {
		case "extern":
			if j+1 < i && t.text(j+1) == `"C"` {
				externC = true
			}
		case "template":
			t.fail(i, "a template __global__ function cannot be launched by name: call it from an extern \"C\" __global__ kernel")
			return
		}
	}
	// The name is the identifier before the parameter list.
	open := -1
	for j := i + 1; j < len(t.toks); j++ {
		if t.text(j) == "(" {
			open = j
			break
		}
		if t.text(j) == ";" || t.text(j) == "{" {
			break
		}
	}
	if open < 1 || t.toks[open-1].kind != tIdent {
		t.fail(i, "cannot find the name of this __global__ function")
		return
	}
	close := t.matching(open)
	if close < 0 || close+1 >= len(t.toks) {
		t.fail(i, "unbalanced parentheses after __global__")
		return
	}
	if t.text(close+1) != "{" {
		return // a declaration
	}
	name := t.text(open - 1)
	if !externC {
		t.fail(open-1, "__global__ function %s is not extern \"C\": the emulator, like a driver-API launch, finds kernels by their extern \"C\" name", name)
		return
	}
	if !t.topLevel(i) {
		t.fail(open-1, "kernel %s must be declared at file scope (not in a namespace or class)", name)
		return
	}
	k := kernelInfo{Name: name, Expr: name, File: t.toks[open-1].file, Line: t.toks[open-1].line}
	for _, p := range t.splitParams(open, close) {
		k.Params = append(k.Params, Param{Name: t.paramName(p[0], p[1]), Decl: t.span(p[0], p[1])})
	}
	t.kernels = append(t.kernels, k)
}

func (t *translator) cudaShared(i int) {
	start := t.declStart(i)
	end := t.statementEnd(i)
	if end < 0 {
		t.fail(i, "cannot find the end of this __shared__ declaration")
		return
	}
	isExtern, isStatic := false, false
	for j := start; j < end; j++ {
		switch t.text(j) {
		case "extern":
			isExtern = true
		case "static":
			isStatic = true
		}
	}
	if isExtern {
		t.cudaDynamicShared(i, start, end)
		return
	}
	for j := i + 1; j < end; j++ {
		if s := t.text(j); s == "=" || s == "{" {
			t.fail(j, "a __shared__ variable cannot have an initializer")
			return
		}
		if t.text(j) == "(" || t.text(j) == "[" {
			j = t.matching(j)
			if j < 0 {
				break
			}
		}
	}
	if t.paddedArray(i, start, end) {
		return
	}
	if isStatic {
		t.repl[i] = "thread_local"
	} else {
		t.repl[i] = "static thread_local"
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

// cudaDynamicShared rewrites `extern __shared__ T name[];` into a pointer
// to the block's dynamic shared memory.
func (t *translator) cudaDynamicShared(i, start, end int) {
	if t.fileScope(i) {
		t.fail(i, "extern __shared__ at file scope is not emulated: declare it inside the kernel")
		return
	}
	// The name is the identifier before "[ ]" at the end.
	if end < 3 || t.text(end-1) != "]" || t.text(end-2) != "[" || t.toks[end-3].kind != tIdent {
		t.fail(i, "expected `extern __shared__ T name[];`")
		return
	}
	name := t.text(end - 3)
	var typ []string
	for j := start; j < end-3; j++ {
		s := t.text(j)
		switch s {
		case "extern", "__shared__", "static":
			continue
		case "alignas", "__attribute__", "__align__":
			if j+1 < end && t.text(j+1) == "(" {
				j = t.matching(j + 1)
			}
			continue
		}
		typ = append(typ, s)
	}
	if len(typ) == 0 {
		t.fail(i, "extern __shared__ %s has no type", name)
		return
	}
	ty := strings.Join(typ, " ")
	t.repl[start] = fmt.Sprintf("%s *%s = reinterpret_cast<%s *>(kbs_dyn_smem);", ty, name, ty)
	t.deleteRange(start+1, end)
}

// ---------------------------------------------------------------------
// Metal.

// translateMetal rewrites a preprocessed Metal source for the emulator:
// kernel functions and their [[host_name]] instantiations are listed with
// how each parameter is bound, attributes and address-space qualifiers
// go (constant becomes const; threadgroup variables become thread_local,
// per threadgroup), and half literals (0.5h) become half values.
func translateMetal(src string) (string, []kernelInfo, error) {
	t, err := newTranslator(src)
	if err != nil {
		return "", nil, err
	}
	templates := map[string]kernelInfo{}
	type inst struct {
		host, fn, expr string
		at             int
	}
	var insts []inst
	// Pass 1: kernels and instantiations.
	for i := range t.toks {
		if !t.live(i) || t.toks[i].kind != tIdent {
			continue
		}
		isKernel := t.text(i) == "kernel"
		attrKernel := false
		if isKernel && i >= 2 && t.text(i-1) == "[" && t.text(i-2) == "[" {
			isKernel, attrKernel = true, true
		}
		if !isKernel {
			continue
		}
		kw := i
		if attrKernel {
			kw = i - 2
		}
		host := ""
		hostAt := -1
		// [[host_name("x")]] right before the kernel keyword.
		if kw >= 2 && t.text(kw-1) == "]" && t.text(kw-2) == "]" {
			open := t.attrOpen(kw - 1)
			if open >= 0 {
				if name, ok := t.hostName(open, kw-1); ok {
					host, hostAt = name, open
				}
			}
		}
		if hostAt >= 1 && t.text(hostAt-1) == "template" {
			// template [[host_name("x")]] kernel T fn<args>;
			end := t.statementEnd(i)
			if end < 0 || t.text(end-1) != ">" && t.text(end-1) != ">>" {
				t.fail(i, "expected `template [[host_name(\"name\")]] kernel type function<arguments>;`")
				return "", nil, t.err
			}
			lt := t.angleOpen(end - 1)
			if lt < 1 || t.toks[lt-1].kind != tIdent {
				t.fail(i, "cannot find the function this instantiation names")
				return "", nil, t.err
			}
			fn := t.text(lt - 1)
			insts = append(insts, inst{host: host, fn: fn, expr: t.span(lt-1, end-1), at: hostAt - 1})
			t.deleteRange(hostAt-1, end)
			continue
		}
		if hostAt >= 0 {
			t.deleteRange(hostAt, kw-1)
		}
		if attrKernel {
			t.deleteRange(kw, kw+4) // [ [ kernel ] ]
		} else {
			t.repl[i] = ""
		}
		k, isTemplate, ok := t.metalKernel(i, attrKernel)
		if !ok {
			return "", nil, t.err
		}
		if host != "" {
			k.Name = host
		}
		if isTemplate {
			templates[k.Expr] = k
			continue
		}
		t.kernels = append(t.kernels, k)
	}
	for _, in := range insts {
		k, ok := templates[in.fn]
		if !ok {
			t.fail(in.at, "[[host_name(%q)]] instantiates %s, which is not a template kernel of this source", in.host, in.fn)
			return "", nil, t.err
		}
		k.Name, k.Expr = in.host, in.expr
		k.File, k.Line = t.toks[in.at].file, t.toks[in.at].line
		t.kernels = append(t.kernels, k)
	}
	// Pass 2: qualifiers, attributes and literals.
	for i := range t.toks {
		if !t.live(i) {
			continue
		}
		tk := t.toks[i]
		s := t.text(i)
		switch {
		case tk.kind == tNumber:
			t.halfLiteral(i, s)
		case s == "[" && i+1 < len(t.toks) && t.text(i+1) == "[" && t.live(i+1):
			t.metalAttribute(i)
		case tk.kind != tIdent:
		case s == "device" || s == "thread":
			t.repl[i] = ""
		case s == "constant":
			t.metalConstant(i)
		case s == "threadgroup":
			t.metalThreadgroup(i)
		case s == "kernel":
			t.repl[i] = ""
		case slices.Contains([]string{"threadgroup_imageblock", "ray_data", "object_data", "texture1d", "texture2d", "texture3d", "texture2d_array", "texturecube", "depth2d", "sampler", "imageblock", "visible_function_table", "intersection_function_table", "acceleration_structure"}, s):
			t.fail(i, "%s is not supported by the emulator", s)
		case s == "asm" || s == "__asm__":
			t.fail(i, "inline assembly is not emulated")
		}
		if t.err != nil {
			return "", nil, t.err
		}
	}
	return t.output() + t.table(metalEntry), t.kernels, nil
}

// attrOpen returns the index of the first '[' of the attribute whose
// closing "]]" ends at close (the second ']').
func (t *translator) attrOpen(close int) int {
	depth := 0
	for j := close; j >= 0; j-- {
		switch t.text(j) {
		case "]":
			depth++
		case "[":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// angleOpen returns the '<' matching the '>' (or ">>") at close.
func (t *translator) angleOpen(close int) int {
	depth := 0
	for j := close; j >= 0; j-- {
		switch t.text(j) {
		case ">":
			depth++
		case ">>":
			depth += 2
		case "<":
			depth--
			if depth == 0 {
				return j
			}
		case ";", "{", "}":
			return -1
		}
	}
	return -1
}

// hostName reads [[host_name("x")]] spanning open..close.
func (t *translator) hostName(open, close int) (string, bool) {
	if close-open != 7 || t.text(open+2) != "host_name" || t.text(open+3) != "(" || t.toks[open+4].kind != tString {
		return "", false
	}
	name, err := strconv.Unquote(t.text(open + 4))
	return name, err == nil
}

// metalKernel parses the kernel function whose `kernel` keyword (or
// [[kernel]] attribute) is at i: its name, whether it is a template, and
// how each parameter is bound. It deletes the parameters' attributes.
func (t *translator) metalKernel(i int, attr bool) (kernelInfo, bool, bool) {
	at := i + 1
	if attr {
		at = i + 3
	}
	isTemplate := false
	for j := t.declStart(i); j < i; j++ {
		if t.text(j) == "template" {
			isTemplate = true
		}
	}
	if at+2 >= len(t.toks) || t.text(at) != "void" || t.toks[at+1].kind != tIdent || t.text(at+2) != "(" {
		t.fail(i, "expected `kernel void name(...)`")
		return kernelInfo{}, false, false
	}
	name := t.text(at + 1)
	open := at + 2
	close := t.matching(open)
	if close < 0 {
		t.fail(i, "unbalanced parentheses in kernel %s", name)
		return kernelInfo{}, false, false
	}
	k := kernelInfo{Name: name, Expr: name, File: t.toks[at+1].file, Line: t.toks[at+1].line}
	if !t.topLevel(i) {
		t.fail(at+1, "kernel %s must be declared at file scope (not in a namespace or class)", name)
		return k, false, false
	}
	for _, p := range t.splitParams(open, close) {
		param := Param{Decl: t.span(p[0], p[1])}
		found := false
		for j := p[0]; j+1 <= p[1]; j++ {
			if t.text(j) != "[" || t.text(j+1) != "[" {
				continue
			}
			end := t.matching(j) // the outer ']'
			if end < 0 || end > p[1] || t.text(end-1) != "]" {
				break
			}
			if err := bindAttribute(t, j+2, end-2, &param); err != "" {
				t.fail(j, "kernel %s: %s", name, err)
				return k, false, false
			}
			t.deleteRange(j, end)
			found = true
			break
		}
		param.Name = t.paramName(p[0], p[1])
		if !found {
			t.fail(p[0], "kernel %s: parameter %q has no [[buffer(n)]], [[threadgroup(n)]] or built-in attribute", name, param.Name)
			return k, false, false
		}
		k.Params = append(k.Params, param)
	}
	return k, isTemplate, true
}

// bindAttribute reads the attribute between tokens first..last
// (exclusive of the brackets) into p, or says what is wrong with it.
func bindAttribute(t *translator, first, last int, p *Param) string {
	if first > last {
		return "empty attribute"
	}
	name := t.text(first)
	index := func() (int, string) {
		if last != first+3 || t.text(first+1) != "(" || t.toks[first+2].kind != tNumber || t.text(first+3) != ")" {
			return 0, fmt.Sprintf("expected [[%s(n)]]", name)
		}
		n, err := strconv.Atoi(t.text(first + 2))
		if err != nil {
			return 0, fmt.Sprintf("bad index in [[%s(...)]]", name)
		}
		return n, ""
	}
	switch name {
	case "buffer":
		n, err := index()
		if err != "" {
			return err
		}
		if n < 0 || n >= 31 {
			return fmt.Sprintf("buffer index %d outside 0..30", n)
		}
		p.Bind, p.Index = BindBuffer, n
	case "threadgroup":
		n, err := index()
		if err != "" {
			return err
		}
		if n < 0 || n >= 8 {
			return fmt.Sprintf("threadgroup index %d outside 0..7", n)
		}
		p.Bind, p.Index = BindThreadgroup, n
	default:
		n, ok := metalBuiltins[name]
		if !ok || last != first {
			return fmt.Sprintf("attribute [[%s]] is not supported by the emulator", t.span(first, last))
		}
		p.Bind, p.Index, p.Builtin = BindBuiltin, n, name
	}
	return ""
}

// metalAttribute checks an attribute outside kernel parameter lists: the
// standard ones stay, Metal's go or are refused.
func (t *translator) metalAttribute(i int) {
	end := t.matching(i)
	if end < 0 || end+1 >= len(t.toks) || t.text(end-1) != "]" {
		return // not an attribute: a[[b]] cannot occur in valid code
	}
	inner := t.matching(i + 1)
	if inner < 0 || inner+1 != end {
		return
	}
	name := t.text(i + 2)
	switch {
	case slices.Contains(stdAttributes, name):
		return
	case name == "function_constant":
		t.fail(i, "function constants ([[function_constant(n)]]) are not emulated yet: pass the value as a kernel argument or a #define")
	case name == "host_name":
		t.fail(i, "[[host_name]] must name a kernel or a template kernel instantiation")
	default:
		t.fail(i, "attribute [[%s]] is not supported by the emulator", t.span(i+2, inner-1))
	}
}

// prevLive returns the nearest token before i that is not deleted.
func (t *translator) prevLive(i int) int {
	for j := i - 1; j >= 0; j-- {
		if r, ok := t.repl[j]; !ok || r != "" {
			return j
		}
	}
	return -1
}

func (t *translator) atDeclStart(i int) bool {
	p := t.prevLive(i)
	if p < 0 {
		return true
	}
	switch t.text(p) {
	case ";", "{", "}":
		return true
	}
	return false
}

// metalConstant turns the constant address space into const; at file
// scope it declares a static const (Metal's program-scope constants).
func (t *translator) metalConstant(i int) {
	prev, next := t.prevLive(i), i+1
	if prev >= 0 && t.text(prev) == "const" || next < len(t.toks) && t.text(next) == "const" {
		t.repl[i] = ""
		return
	}
	if t.fileScope(i) && t.atDeclStart(i) {
		end := t.statementEnd(i)
		for j := i + 1; end > 0 && j < end; j++ {
			if t.text(j) == "constexpr" {
				t.repl[i] = "static"
				return
			}
		}
		t.repl[i] = "static const"
		return
	}
	t.repl[i] = "const"
}

// metalThreadgroup handles the threadgroup address space: a variable
// declared in it inside a function becomes thread_local (one per
// threadgroup); as a pointer's qualifier it goes.
func (t *translator) metalThreadgroup(i int) {
	if t.fileScope(i) || !t.atDeclStart(i) {
		t.repl[i] = ""
		return
	}
	end := t.statementEnd(i)
	if end < 0 {
		t.repl[i] = ""
		return
	}
	depth := 0
	for j := i + 1; j < end; j++ {
		s := t.text(j)
		switch s {
		case "<", "(":
			depth++
		case ">", ")":
			depth--
		case "*", "&", "&&":
			if depth == 0 {
				t.repl[i] = "" // a pointer or reference to threadgroup memory
				return
			}
		case "[", "=", ",":
			if depth == 0 {
				if s == "=" {
					t.fail(j, "a threadgroup variable cannot have an initializer")
					return
				}
				j = end
			}
		}
	}
	if t.paddedArray(i, t.declStart(i), end) {
		return
	}
	t.repl[i] = "static thread_local"
}

// halfLiteral rewrites a half literal (1.5h) as a half value.
func (t *translator) halfLiteral(i int, s string) {
	if len(s) < 2 || strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		return
	}
	last := s[len(s)-1]
	if last != 'h' && last != 'H' {
		return
	}
	num := s[:len(s)-1]
	if strings.ContainsAny(num, ".eE") {
		t.repl[i] = "kbs::half(" + num + "f)"
	} else {
		t.repl[i] = "kbs::half(" + num + ")"
	}
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
