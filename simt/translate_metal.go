package simt

// This file holds the Metal translation: kernel functions and their
// [[host_name]] instantiations with their parameters' bindings, attributes,
// the constant and threadgroup address spaces, and half literals.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

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
