package simt

// This file holds the CUDA translation: __global__ kernels, __shared__
// variables (static and extern dynamic) and the refusal of inline
// assembly.

import (
	"fmt"
	"strings"
)

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
