package simt

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestLexLineMarkers(t *testing.T) {
	src := "int a;\n# 10 \"k.cu\"\nint b; /* two\nlines */ int c;\n# 3 \"/usr/include/x.h\" 1 3 4\nint d;\n"
	toks, err := lex(src)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		file   string
		line   int
		system bool
	}{"a": {"", 1, false}, "b": {"k.cu", 10, false}, "c": {"k.cu", 11, false}, "d": {"/usr/include/x.h", 3, true}}
	for _, tk := range toks {
		s := src[tk.start:tk.end]
		if w, ok := want[s]; ok && (tk.file != w.file || tk.line != w.line || tk.system != w.system) {
			t.Errorf("token %s at %s:%d (system %v), want %s:%d (%v)", s, tk.file, tk.line, tk.system, w.file, w.line, w.system)
		}
	}
}

func TestLexLiterals(t *testing.T) {
	src := `x = u8"a\"b" + R"d(raw ) " still)d" + 'c' + 1.5e-3f + 0x1p4 + 1'000 + .5h;`
	toks, err := lex(src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range toks {
		got = append(got, src[tk.start:tk.end])
	}
	want := []string{"x", "=", `u8"a\"b"`, "+", `R"d(raw ) " still)d"`, "+", "'c'", "+", "1.5e-3f", "+", "0x1p4", "+", "1'000", "+", ".5h", ";"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("tokens\n%q\nwant\n%q", got, want)
	}
	for _, bad := range []string{`"open`, "/* open", "a @ b"} {
		if _, err := lex(bad); err == nil {
			t.Errorf("lex(%q): no error", bad)
		}
	}
}

func TestTranslateCUDA(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		kernels   []string
		has       []string // substrings of the output
		err       string
	}{
		{name: "kernel", src: `extern "C" __global__ void k(const float* x, int n) { }`, kernels: []string{"k(x,n)"},
			has: []string{`{"k", 1, kbs::cuda_sig<decltype(&k)>::n, &kbs::cuda_entry<&k>`}},
		{name: "extern block", src: "extern \"C\" {\n__global__ void a(int v) {}\n__global__ void b() {}\n}", kernels: []string{"a(v)", "b()"}},
		{name: "declaration only", src: `extern "C" __global__ void k(int); extern "C" __global__ void k(int n) {}`, kernels: []string{"k(n)"}},
		{name: "shared", src: "extern \"C\" __global__ void k() { __shared__ float buf[32]; static __shared__ int c; }",
			has: []string{"static thread_local kbs::shared_array<float [32]> kbs_sh_buf; auto &buf = kbs_sh_buf.v; kbs::redzone(kbs_sh_buf);", "static thread_local int c;"}},
		{name: "shared array forms", src: "extern \"C\" __global__ void k() { __shared__ alignas(16) volatile half t[4][8]; __shared__ float a[2], b[2]; __shared__ float *p; }",
			has: []string{"alignas(16) static thread_local kbs::shared_array<volatile half [4][8]> kbs_sh_t; auto &t = kbs_sh_t.v;", "static thread_local float a[2], b[2];", "static thread_local float *p;"}},
		{name: "dynamic shared", src: "extern \"C\" __global__ void k() { extern __shared__ alignas(16) unsigned char smem[]; }",
			has: []string{"unsigned char *smem = reinterpret_cast<unsigned char *>(kbs_dyn_smem);"}},
		{name: "not extern C", src: `__global__ void k() {}`, err: `__global__ function k is not extern "C"`},
		{name: "template", src: `template <int N> __global__ void k() {}`, err: "template __global__"},
		{name: "in namespace", src: `namespace n { extern "C" __global__ void k() {} }`, err: "file scope"},
		{name: "shared initializer", src: `extern "C" __global__ void k() { __shared__ int x = 0; }`, err: "initializer"},
		{name: "file-scope dynamic shared", src: `extern __shared__ float s[];`, err: "extern __shared__ at file scope"},
		{name: "bad dynamic shared", src: `extern "C" __global__ void k() { extern __shared__ float s[4]; }`, err: "expected `extern __shared__ T name[];`"},
		{name: "asm", src: "extern \"C\" __global__ void k() {\n asm volatile(\"bar.sync 0;\"); }", err: ":2: inline assembly is not emulated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ks, err := translateCUDA(tc.src)
			if tc.err != "" {
				var se *SourceError
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &se) {
					t.Fatalf("err %v, want a SourceError containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkKernels(t, ks, tc.kernels)
			for _, h := range tc.has {
				if !strings.Contains(out, h) {
					t.Errorf("output lacks %q:\n%s", h, out)
				}
			}
			if strings.Contains(out, "__global__") || strings.Contains(out, "__shared__") {
				t.Errorf("output keeps a CUDA keyword:\n%s", out)
			}
			// Every line stays where it was.
			body := out[:strings.Index(out, "\n# 1 \"<kbsimt kernel table>\"")]
			if strings.Count(body, "\n") != strings.Count(tc.src, "\n") {
				t.Errorf("translation moved lines:\n%s", body)
			}
		})
	}
}

func checkKernels(t *testing.T, ks []kernelInfo, want []string) {
	t.Helper()
	var got []string
	for _, k := range ks {
		var ps []string
		for _, p := range k.Params {
			ps = append(ps, p.Name)
		}
		got = append(got, k.Name+"("+strings.Join(ps, ",")+")")
	}
	if want != nil && strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("kernels %v, want %v", got, want)
	}
}

func TestTranslateMetal(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		kernels   []string
		binds     string // Bind:Index of each parameter of the first kernel
		has       []string
		lacks     []string
		err       string
	}{
		{name: "kernel", src: `kernel void k(device const float * a [[buffer(0)]], constant int & n [[buffer(2)]], threadgroup float * s [[threadgroup(1)]], uint3 i [[thread_position_in_grid]], ushort l [[thread_index_in_simdgroup]]) { }`,
			kernels: []string{"k(a,n,s,i,l)"}, binds: "1:0 1:2 2:1 3:1 3:8",
			has:   []string{"const float * a", "const int & n", "float * s", `{"k", 2, kbs::metal_sig<decltype(&k)>::n, &kbs::metal_entry<&k, kbs_binds_0>`},
			lacks: []string{"device", "[[", "threadgroup"}},
		{name: "attribute kernel", src: `[[kernel]] void k(device float * a [[buffer(0)]]) {}`, kernels: []string{"k(a)"}},
		{name: "host name", src: `[[host_name("other")]] kernel void k(device float * a [[buffer(0)]]) {}`, kernels: []string{"other(a)"}},
		{name: "template", src: "template <typename T> kernel void k(device T * a [[buffer(0)]]) {}\ntypedef decltype(k<float>) k_t;\ntemplate [[host_name(\"k_f32\")]] kernel k_t k<float>;\ntemplate [[host_name(\"k_f16\")]] kernel k_t k<half>;",
			kernels: []string{"k_f32(a)", "k_f16(a)"}, has: []string{"&kbs::metal_entry<&k<half>, kbs_binds_1>"}},
		{name: "program constants", src: "constant float kv[2] = {1, 2};\nconstant constexpr int n = 4;\nconstant const int m = 1;",
			has: []string{"static const float kv[2]", "static constexpr int n", " const int m"}},
		{name: "threadgroup variables", src: `kernel void k(device float * a [[buffer(0)]]) { threadgroup float buf[32]; threadgroup float * p = (threadgroup float *) buf; threadgroup int x, y; }`,
			has: []string{"static thread_local kbs::shared_array<float [32]> kbs_sh_buf; auto &buf = kbs_sh_buf.v;", " float * p = ( float *) buf;", "static thread_local int x, y;"}},
		{name: "half literal", src: `half a = 0.5h + 2h + 1.0f;`, has: []string{"kbs::half(0.5f) + kbs::half(2) + 1.0f"}},
		{name: "standard attribute", src: `[[maybe_unused]] int x;`, has: []string{"[[maybe_unused]] int x;"}},
		{name: "function constant", src: `constant bool fc [[function_constant(0)]];`, err: "function constants"},
		{name: "no attribute", src: `kernel void k(device float * a) {}`, err: `parameter "a" has no [[buffer(n)]]`},
		{name: "unknown attribute", src: `kernel void k(device float * a [[color(0)]]) {}`, err: "attribute [[color(0)]] is not supported"},
		{name: "bad buffer index", src: `kernel void k(device float * a [[buffer(40)]]) {}`, err: "buffer index 40"},
		{name: "texture", src: `kernel void k(texture2d<float> t [[texture(0)]]) {}`, err: "[[texture(0)]] is not supported"},
		{name: "unknown instantiation", src: `template [[host_name("x")]] kernel k_t nope<float>;`, err: "not a template kernel"},
		{name: "threadgroup initializer", src: `kernel void k(device float * a [[buffer(0)]]) { threadgroup int x = 0; }`, err: "initializer"},
		{name: "not void", src: `kernel int k() {}`, err: "expected `kernel void name(...)`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ks, err := translateMetal(tc.src)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkKernels(t, ks, tc.kernels)
			if tc.binds != "" {
				var b []string
				for _, p := range ks[0].Params {
					b = append(b, fmt.Sprintf("%d:%d", p.Bind, p.Index))
				}
				if strings.Join(b, " ") != tc.binds {
					t.Errorf("bindings %v, want %s", b, tc.binds)
				}
			}
			body := out[:strings.Index(out, "\n# 1 \"<kbsimt kernel table>\"")]
			for _, h := range tc.has {
				if !strings.Contains(out, h) {
					t.Errorf("output lacks %q:\n%s", h, out)
				}
			}
			for _, l := range tc.lacks {
				if strings.Contains(body, l) {
					t.Errorf("output keeps %q:\n%s", l, body)
				}
			}
		})
	}
}

// FuzzTranslate: the lexer and both translators return an error or an
// output for any input, never a panic.
func FuzzTranslate(f *testing.F) {
	for _, s := range []string{
		`extern "C" __global__ void k(const float* x) { __shared__ float b[4]; extern __shared__ int d[]; }`,
		`template <typename T> kernel void k(device T * a [[buffer(0)]]) { threadgroup float s[2]; }
template [[host_name("x")]] kernel k_t k<float>;`,
		"# 1 \"a.cu\" 1 3\n[[ ]] kernel void",
		"extern __shared__", "kernel void k(", "[[", "template [[host_name(\"x\")]] kernel", "0.5h",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		translateCUDA(src)
		translateMetal(src)
	})
}
