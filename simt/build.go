package simt

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// abiVersion is KBS_ABI_VERSION of csrc/include/kbsimt_abi.h.
const abiVersion = 1

// translatorVersion changes whenever the translator's output does, so
// cached modules built by an older one are not reused.
// It covers the compiler flags of modules too.
const translatorVersion = "2"

//go:embed csrc
var csrc embed.FS

// A Dialect is the language a kernel source is written in.
type Dialect int

const (
	// CUDA is CUDA C++: extern "C" __global__ kernels.
	CUDA Dialect = 1
	// Metal is the Metal Shading Language: kernel functions, found by
	// name or by [[host_name]].
	Metal Dialect = 2
)

func (d Dialect) String() string {
	switch d {
	case CUDA:
		return "cuda"
	case Metal:
		return "metal"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// A Mode is how a module is compiled.
type Mode int

const (
	// Checked instruments every memory access of device code: shared
	// memory races, accesses outside buffers and shared memory, stack
	// overflows and time limits are caught, and shared memory starts
	// each block filled with 0xff bytes. It is several times slower.
	Checked Mode = iota
	// Fast compiles device code with optimization and no
	// instrumentation; barriers and collectives are still checked.
	Fast
)

func (m Mode) String() string {
	if m == Fast {
		return "fast"
	}
	return "checked"
}

// A Source is one file of a kernel program.
type Source struct {
	// Name is the file's name, as #include and error messages use it.
	Name string
	Text []byte
}

// A Program is what a module is built from: one source compiled as the
// module, the headers it includes by name, and macro definitions.
type Program struct {
	Dialect Dialect
	Main    Source
	Headers []Source
	// Defines are -D macros: "NAME" or "NAME=VALUE".
	Defines []string
}

// A Toolchain is the C++ compiler the emulator builds with.
type Toolchain struct {
	// CXX is the compiler command ($KERNBENCH_CXX, else g++).
	CXX string
	// Version is the first line of `CXX --version`.
	Version string
	// Addr2line and Cxxfilt resolve fault addresses to source lines and
	// names; empty when not found (faults then name no source line).
	Addr2line, Cxxfilt string
}

var (
	toolchainOnce sync.Once
	toolchain     Toolchain
	toolchainErr  error
)

// FindToolchain returns the compiler the emulator uses, or an error
// saying why it has none.
func FindToolchain() (Toolchain, error) {
	toolchainOnce.Do(func() { toolchain, toolchainErr = findToolchain() })
	return toolchain, toolchainErr
}

func findToolchain() (Toolchain, error) {
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		return Toolchain{}, fmt.Errorf("the SIMT emulator runs on linux/amd64 and linux/arm64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	cxx := os.Getenv("KERNBENCH_CXX")
	if cxx == "" {
		cxx = "g++"
	}
	path, err := exec.LookPath(cxx)
	if err != nil {
		return Toolchain{}, fmt.Errorf("no C++ compiler: %s not found (install g++, or set $KERNBENCH_CXX)", cxx)
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return Toolchain{}, fmt.Errorf("%s --version: %v", path, err)
	}
	version, _, _ := strings.Cut(string(out), "\n")
	if !strings.Contains(version, "g++") && !strings.Contains(version, "GCC") {
		return Toolchain{}, fmt.Errorf("%s is not GCC (%q): the emulator's checks use GCC's thread-sanitizer instrumentation", path, version)
	}
	tc := Toolchain{CXX: path, Version: version}
	if p, err := exec.LookPath("addr2line"); err == nil {
		tc.Addr2line = p
	}
	if p, err := exec.LookPath("c++filt"); err == nil {
		tc.Cxxfilt = p
	}
	return tc, nil
}

// cacheRoot is where built libraries are kept: $KERNBENCH_SIMT_CACHE, or
// kernbench/simt under the user cache directory.
func cacheRoot() (string, error) {
	if d := os.Getenv("KERNBENCH_SIMT_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "kernbench", "simt"), nil
}

// csrcHash hashes the embedded runtime and headers.
var csrcHash = sync.OnceValue(func() string {
	h := sha256.New()
	fs.WalkDir(csrc, "csrc", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := csrc.ReadFile(path)
		fmt.Fprintf(h, "%s %d\n", path, len(b))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))
})

// cached returns dir/key, building it with build (into a fresh temporary
// directory, renamed into place) when it does not exist yet. Concurrent
// builders of the same key each build; the first rename wins.
func cached(key string, build func(dir string) error) (string, error) {
	root, err := cacheRoot()
	if err != nil {
		return "", err
	}
	final := filepath.Join(root, key)
	if _, err := os.Stat(filepath.Join(final, "done")); err == nil {
		// Mark it used, for pruneCache.
		now := time.Now()
		os.Chtimes(filepath.Join(final, "done"), now, now)
		return final, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("simt: cache: %w", err)
	}
	tmp, err := os.MkdirTemp(root, "tmp-"+key+"-")
	if err != nil {
		return "", fmt.Errorf("simt: cache: %w", err)
	}
	if err := build(tmp); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, "done"), nil, 0o644); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("simt: cache: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(filepath.Join(final, "done")); serr == nil {
			return final, nil // another process built it first
		}
		// A stale directory without its marker: replace it.
		os.RemoveAll(final)
		return cached(key, build)
	}
	return final, nil
}

// Cache entries unused for cacheMaxAge are removed, as are temporary
// build directories older than tmpMaxAge (a build that was killed).
const (
	cacheMaxAge = 30 * 24 * time.Hour
	tmpMaxAge   = time.Hour
)

// pruneCache removes stale entries from the cache directory.
func pruneCache() error {
	root, err := cacheRoot()
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	now := time.Now()
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if strings.HasPrefix(e.Name(), "tmp-") {
			if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > tmpMaxAge {
				os.RemoveAll(dir)
			}
			continue
		}
		if info, err := os.Stat(filepath.Join(dir, "done")); err == nil && now.Sub(info.ModTime()) > cacheMaxAge {
			os.RemoveAll(dir)
		}
	}
	return nil
}

// includeDir writes the compat headers into the cache once and returns
// their directory.
func includeDir() (string, error) {
	return cached("include-"+csrcHash()[:16], func(dir string) error {
		return fs.WalkDir(csrc, "csrc/include", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := csrc.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, filepath.Base(path)), b, 0o644)
		})
	})
}

// runtimeLib builds the runtime library once per toolchain and returns
// its path.
func runtimeLib(tc Toolchain) (string, error) {
	key := hashKey("runtime", csrcHash(), tc.Version)
	name := "libkbsimt-" + key[:16] + ".so"
	dir, err := cached("rt-"+key[:16], func(dir string) error {
		inc, err := includeDir()
		if err != nil {
			return err
		}
		var srcs []string
		for _, f := range []string{"runtime.cc", "driver.cc"} {
			b, err := csrc.ReadFile("csrc/" + f)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				return err
			}
			srcs = append(srcs, filepath.Join(dir, f))
		}
		args := []string{"-std=c++17", "-O2", "-g", "-fPIC", "-shared", "-pthread", "-fvisibility=hidden",
			"-isystem", inc, "-Wl,-soname," + name, "-o", filepath.Join(dir, name)}
		args = append(args, srcs...)
		return compile(tc.CXX, dir, append(args, "-ldl")...)
	})
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// moduleMeta is what a built module's directory records beside the
// library: the translator's view of each kernel.
type moduleMeta struct {
	Dialect Dialect      `json:"dialect"`
	Mode    Mode         `json:"mode"`
	Kernels []kernelInfo `json:"kernels"`
}

// buildModule compiles p in mode m (cached) and returns the library's
// path and the kernels' metadata.
func buildModule(tc Toolchain, rtLib string, p Program, m Mode) (string, moduleMeta, error) {
	if p.Dialect != CUDA && p.Dialect != Metal {
		return "", moduleMeta{}, fmt.Errorf("simt: unknown dialect %d", int(p.Dialect))
	}
	if p.Main.Name == "" || strings.ContainsAny(p.Main.Name, "/\\") {
		return "", moduleMeta{}, fmt.Errorf("simt: source name %q must be a plain file name", p.Main.Name)
	}
	parts := []string{"module", translatorVersion, csrcHash(), tc.Version, p.Dialect.String(), m.String(), p.Main.Name, string(p.Main.Text)}
	for _, h := range p.Headers {
		parts = append(parts, h.Name, string(h.Text))
	}
	parts = append(parts, p.Defines...)
	key := hashKey(parts...)
	var meta moduleMeta
	dir, err := cached("mod-"+key[:20], func(dir string) error {
		var err error
		meta, err = compileModule(tc, rtLib, dir, p, m)
		if err != nil {
			return err
		}
		b, err := json.Marshal(meta)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, "meta.json"), b, 0o644)
	})
	if err != nil {
		return "", moduleMeta{}, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return "", moduleMeta{}, fmt.Errorf("simt: cache: %w", err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return "", moduleMeta{}, fmt.Errorf("simt: cache: %s: %w", dir, err)
	}
	return filepath.Join(dir, "module.so"), meta, nil
}

func compileModule(tc Toolchain, rtLib, dir string, p Program, m Mode) (moduleMeta, error) {
	inc, err := includeDir()
	if err != nil {
		return moduleMeta{}, err
	}
	for _, s := range append([]Source{p.Main}, p.Headers...) {
		if s.Name == "" || strings.ContainsAny(s.Name, "/\\") {
			return moduleMeta{}, fmt.Errorf("simt: source name %q must be a plain file name", s.Name)
		}
		if err := os.WriteFile(filepath.Join(dir, s.Name), s.Text, 0o644); err != nil {
			return moduleMeta{}, err
		}
	}
	pre := []string{"-E", "-std=c++17", "-D__KBSIMT__=1", "-isystem", inc, "-I", dir}
	if m == Checked {
		pre = append(pre, "-DKBS_CHECKED=1")
	}
	for _, d := range p.Defines {
		pre = append(pre, "-D"+d)
	}
	switch p.Dialect {
	case CUDA:
		pre = append(pre, "-include", "kbsimt_cuda.h", "-D__CUDA_EMULATED__=1")
	case Metal:
		pre = append(pre, "-include", "kbsimt_metal.h", "-D__METAL_VERSION__=310")
	}
	pre = append(pre, "-x", "c++", p.Main.Name, "-o", "pre.ii")
	if err := compile(tc.CXX, dir, pre...); err != nil {
		return moduleMeta{}, err
	}
	raw, err := os.ReadFile(filepath.Join(dir, "pre.ii"))
	if err != nil {
		return moduleMeta{}, err
	}
	var out string
	var kernels []kernelInfo
	if p.Dialect == CUDA {
		out, kernels, err = translateCUDA(string(raw))
	} else {
		out, kernels, err = translateMetal(string(raw))
	}
	if err != nil {
		return moduleMeta{}, fmt.Errorf("simt: %s: %w", p.Main.Name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "module.ii"), []byte(out), 0o644); err != nil {
		return moduleMeta{}, err
	}
	// Hidden visibility and no GNU-unique symbols keep every module's
	// variables its own: a static __shared__ array of a template device
	// function would otherwise be one object for every module that
	// instantiates it, and live outside the shared memory the checks
	// watch for all but the first.
	cc := []string{"-std=c++17", "-fPIC", "-fno-strict-aliasing", "-fno-math-errno", "-Wno-attributes", "-Wno-unknown-pragmas",
		"-fvisibility=hidden", "-fvisibility-inlines-hidden", "-fno-gnu-unique"}
	if m == Checked {
		// -O1 keeps variables where the race checker can see each access
		// as the source wrote it; -g lets faults name source lines.
		cc = append(cc, "-O1", "-g", "-fsanitize=thread", "-Wno-tsan")
	} else {
		cc = append(cc, "-O2")
	}
	cc = append(cc, "-c", "module.ii", "-o", "module.o")
	if err := compile(tc.CXX, dir, cc...); err != nil {
		return moduleMeta{}, err
	}
	link := []string{"-shared", "-o", "module.so", "module.o", rtLib,
		"-Wl,--no-undefined", "-Wl,-rpath," + filepath.Dir(rtLib)}
	if err := compile(tc.CXX, dir, link...); err != nil {
		return moduleMeta{}, err
	}
	return moduleMeta{Dialect: p.Dialect, Mode: m, Kernels: kernels}, nil
}

// A CompileError is the compiler's refusal of a kernel source.
type CompileError struct {
	Command string
	Output  string
}

func (e *CompileError) Error() string {
	out := strings.TrimSpace(e.Output)
	const max = 4000
	if len(out) > max {
		out = out[:max] + "\n..."
	}
	return "simt: compile failed:\n" + out
}

// compile runs the compiler in dir and returns its messages as a
// CompileError when it fails.
func compile(cxx, dir string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cxx, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := out.String()
		if msg == "" {
			msg = err.Error()
		}
		msg = explainUndefined(msg)
		return &CompileError{Command: cxx + " " + strings.Join(args, " "), Output: strings.ReplaceAll(msg, dir+"/", "")}
	}
	return nil
}

// explainUndefined adds a hint to a link error for a __tsan_* hook the
// runtime lacks: the kernel uses something the instrumented build cannot
// check (128-bit atomics, for one).
func explainUndefined(msg string) string {
	if strings.Contains(msg, "undefined reference to `__tsan_") {
		return msg + "\n(the kernel uses an operation the emulator's checks do not cover, such as a 128-bit atomic)"
	}
	return msg
}

func hashKey(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// DefaultMode is the mode the GPU backends build their kernels in:
// Checked, or Fast where $KERNBENCH_SIMT_MODE is "fast".
func DefaultMode() Mode {
	if strings.EqualFold(os.Getenv("KERNBENCH_SIMT_MODE"), "fast") {
		return Fast
	}
	return Checked
}

// errNoKernel is wrapped by Module.Kernel for a name the module lacks.
var errNoKernel = errors.New("no such kernel")
