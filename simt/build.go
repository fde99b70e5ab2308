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
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
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

// cacheRoot is where built libraries are kept: $KERNBENCH_SIMT_CACHE (made
// absolute, for the compiler runs in the entry's folder), or
// kernbench/simt under the user cache directory, or, where there is none
// (no $HOME), a folder of this user's own under the system's temporary
// folder (see userTempCache).
func cacheRoot() (string, error) {
	if d := os.Getenv("KERNBENCH_SIMT_CACHE"); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return "", fmt.Errorf("simt: $KERNBENCH_SIMT_CACHE: %w", err)
		}
		return abs, nil
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "kernbench", "simt"), nil
	}
	return userTempCache()
}

// userTempCache returns os.TempDir()/kernbench-simt-<uid>, created with
// mode 0700. It refuses a folder that is not this user's, or that others
// can write to: the libraries in it are loaded into this process.
func userTempCache() (string, error) {
	d := filepath.Join(os.TempDir(), fmt.Sprintf("kernbench-simt-%d", os.Getuid()))
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("simt: cache: %w", err)
	}
	if err := checkPrivate(d); err != nil {
		return "", fmt.Errorf("simt: cache %s: %w (set $KERNBENCH_SIMT_CACHE or $HOME)", d, err)
	}
	return d, nil
}

// notices receives the one-line notices of the cache (a damaged entry
// rebuilt).
var notices io.Writer = os.Stderr

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

// A manifest is what a cache entry's "done" marker holds: the size and
// SHA-256 of every file the build left, checked before the entry is used,
// so that a truncated or overwritten library is rebuilt instead of being
// loaded (a truncated mapped library faults on first touch).
type manifest struct {
	Files map[string]manifestFile `json:"files"`
}

type manifestFile struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// makeManifest records every regular file under dir.
func makeManifest(dir string) (manifest, error) {
	m := manifest{Files: map[string]manifestFile{}}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		f, err := hashFile(path)
		if err != nil {
			return err
		}
		m.Files[filepath.ToSlash(rel)] = f
		return nil
	})
	return m, err
}

func hashFile(path string) (manifestFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return manifestFile{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return manifestFile{}, err
	}
	return manifestFile{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// checkEntry returns why the entry in dir cannot be used, or "" when
// every file its manifest names has the size and hash recorded.
func checkEntry(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "done"))
	if err != nil {
		return err.Error()
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil || len(m.Files) == 0 {
		return "its manifest is missing or unreadable"
	}
	names := make([]string, 0, len(m.Files))
	for name := range m.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		want := m.Files[name]
		path := filepath.Join(dir, filepath.FromSlash(name))
		st, err := os.Stat(path)
		if err != nil {
			return fmt.Sprintf("%s: %v", name, errors.Unwrap(err))
		}
		if st.Size() != want.Size {
			return fmt.Sprintf("%s has %d bytes, %d were built", name, st.Size(), want.Size)
		}
		got, err := hashFile(path)
		if err != nil {
			return fmt.Sprintf("%s: %v", name, err)
		}
		if got.SHA256 != want.SHA256 {
			return fmt.Sprintf("%s differs from what was built", name)
		}
	}
	return ""
}

// verified holds the entries checked by this process, by folder: each is
// checked once, before its first use.
var verified sync.Map

// evict removes a damaged cache entry, saying why on notices, so that the
// next use rebuilds it. It moves the entry aside first, so that no other
// process sees it half removed.
func evict(dir, why string) {
	verified.Delete(dir)
	fmt.Fprintf(notices, "simt: cache entry %s is damaged (%s); rebuilding it\n", dir, why)
	aside := filepath.Join(filepath.Dir(dir), fmt.Sprintf("tmp-evicted-%s-%d", filepath.Base(dir), os.Getpid()))
	if err := os.Rename(dir, aside); err == nil {
		dir = aside
	}
	os.RemoveAll(dir)
}

// cached returns dir/key, building it with build (into a fresh temporary
// directory, renamed into place) when it does not exist yet, or when it
// is damaged (see manifest). Concurrent builders of the same key each
// build; the first rename wins. build's context is canceled when a signal
// ends the build (see startBuild).
func cached(key string, build func(ctx context.Context, dir string) error) (string, error) {
	root, err := cacheRoot()
	if err != nil {
		return "", err
	}
	final := filepath.Join(root, key)
	if _, ok := verified.Load(final); ok {
		return final, nil
	}
	if _, err := os.Stat(filepath.Join(final, "done")); err == nil {
		if why := checkEntry(final); why != "" {
			evict(final, why)
		} else {
			// Mark it used, for pruneCache.
			now := time.Now()
			os.Chtimes(filepath.Join(final, "done"), now, now)
			verified.Store(final, true)
			return final, nil
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("simt: cache: %w", err)
	}
	tmp, err := os.MkdirTemp(root, "tmp-"+key+"-")
	if err != nil {
		return "", fmt.Errorf("simt: cache: %w", err)
	}
	ctx, done := startBuild(tmp)
	defer done()
	if err := build(ctx, tmp); err != nil {
		os.RemoveAll(tmp)
		if ctx.Err() != nil {
			return "", fmt.Errorf("simt: build of %s interrupted", key)
		}
		return "", err
	}
	m, err := makeManifest(tmp)
	if err == nil {
		var b []byte
		if b, err = json.Marshal(m); err == nil {
			err = os.WriteFile(filepath.Join(tmp, "done"), b, 0o644)
		}
	}
	if err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("simt: cache: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(filepath.Join(final, "done")); serr == nil {
			return cached(key, build) // another process built it first: check it
		}
		// A stale directory without its marker: replace it.
		os.RemoveAll(final)
		return cached(key, build)
	}
	verified.Store(final, true)
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
	return cached("include-"+csrcHash()[:16], func(_ context.Context, dir string) error {
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
	dir, err := cached("rt-"+key[:16], func(ctx context.Context, dir string) error {
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
		return compile(ctx, tc.CXX, dir, append(args, "-ldl")...)
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

// failedBuilds holds, by module key, the errors of sources the compiler
// or the translator refused in this process, so that a kernel file that
// does not compile costs one build, not one per launch.
var failedBuilds sync.Map

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
	if err, ok := failedBuilds.Load(key); ok {
		return "", moduleMeta{}, err.(error)
	}
	var meta moduleMeta
	dir, err := cached("mod-"+key[:20], func(ctx context.Context, dir string) error {
		var err error
		meta, err = compileModule(ctx, tc, rtLib, dir, p, m)
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
		var ce *CompileError
		var se *SourceError
		if errors.As(err, &ce) || errors.As(err, &se) {
			// The source's own fault: building it again gives the same.
			failedBuilds.Store(key, err)
		}
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

func compileModule(ctx context.Context, tc Toolchain, rtLib, dir string, p Program, m Mode) (moduleMeta, error) {
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
	if err := compile(ctx, tc.CXX, dir, pre...); err != nil {
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
	// Every access through a pointer tests its address against its
	// type's alignment (runtime.cc's __ubsan_handle_type_mismatch_v1):
	// a GPU faults on a misaligned access, which the CPU would take.
	cc = append(cc, "-fsanitize=alignment", "-fno-sanitize-recover=alignment")
	if m == Checked {
		// -O1 keeps variables where the race checker can see each access
		// as the source wrote it; -g lets faults name source lines.
		cc = append(cc, "-O1", "-g", "-fsanitize=thread", "-Wno-tsan")
	} else {
		cc = append(cc, "-O2")
	}
	cc = append(cc, "-c", "module.ii", "-o", "module.o")
	if err := compile(ctx, tc.CXX, dir, cc...); err != nil {
		return moduleMeta{}, err
	}
	link := []string{"-shared", "-o", "module.so", "module.o", rtLib,
		"-Wl,--no-undefined", "-Wl,-rpath," + filepath.Dir(rtLib)}
	if err := compile(ctx, tc.CXX, dir, link...); err != nil {
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

// defaultBuildTimeout is how long one compiler run may take unless
// $KERNBENCH_SIMT_BUILD_TIMEOUT says otherwise: the checked build of the
// largest kernel file takes minutes on two busy cores.
const defaultBuildTimeout = 20 * time.Minute

// buildTimeout returns the time limit of one compiler run.
func buildTimeout() (time.Duration, error) {
	v := os.Getenv("KERNBENCH_SIMT_BUILD_TIMEOUT")
	if v == "" {
		return defaultBuildTimeout, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("simt: $KERNBENCH_SIMT_BUILD_TIMEOUT=%q is not a positive duration such as 20m", v)
	}
	return d, nil
}

// compile runs the compiler in dir, in a process group of its own that is
// killed whole when ctx ends or the time limit passes, and returns its
// messages as a CompileError when it fails.
func compile(ctx context.Context, cxx, dir string, args ...string) error {
	limit, err := buildTimeout()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, cxx, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return &CompileError{Command: cxx + " " + strings.Join(args, " "), Output: err.Error()}
	}
	untrack := trackProcess(cmd.Process.Pid)
	err = cmd.Wait()
	untrack()
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("simt: %s ran past its time limit of %v and was killed (set $KERNBENCH_SIMT_BUILD_TIMEOUT for more)", filepath.Base(cxx), limit)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("simt: %s: %w", filepath.Base(cxx), ctx.Err())
		}
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
// $KERNBENCH_SIMT_MODE ("checked" or "fast"), Checked when it is unset.
// Any other value is an error naming the valid ones.
func DefaultMode() (Mode, error) {
	v := os.Getenv("KERNBENCH_SIMT_MODE")
	if v == "" {
		return Checked, nil
	}
	m, err := ParseMode(v)
	if err != nil {
		return Checked, fmt.Errorf("$KERNBENCH_SIMT_MODE: %w", err)
	}
	return m, nil
}

// ParseMode returns the mode called s ("checked" or "fast", in any case).
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{Checked, Fast} {
		if strings.EqualFold(s, m.String()) {
			return m, nil
		}
	}
	return Checked, fmt.Errorf("simt: unknown mode %q (valid: checked, fast)", s)
}

// errNoKernel is wrapped by Module.Kernel for a name the module lacks.
var errNoKernel = errors.New("no such kernel")
