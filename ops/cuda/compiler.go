package cuda

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/kernbench/kernbench/internal/dynlib"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/simt"
)

// kernelFS holds the kernel sources: each .cu file is a module, built on
// first use; the .cuh files are headers every module may include.
//
//go:embed kernels/*.cu kernels/*.cuh
var kernelFS embed.FS

// kernelSources returns the kernel files by name.
var kernelSources = sync.OnceValues(func() (map[string][]byte, error) { return gpu.ReadSources(kernelFS, "kernels") })

// programOf returns a kernel file with the headers it may include: those
// of the kernels folder and the shared ones (gpu.SharedHeaders).
func programOf(file string) (main []byte, headers map[string][]byte, err error) {
	return gpu.Sources{Backend: "cuda", Main: ".cu", Header: ".cuh", Files: kernelSources}.Program(file)
}

// A compiler turns a kernel source file into the image cuModuleLoadData
// takes: a cubin from NVRTC for a GPU, a library built by the SIMT
// emulator for the emulated device.
type compiler interface {
	image(file string) ([]byte, error)
	// String describes the compiler and its options, for reports.
	String() string
}

// ---------------------------------------------------------------------
// The emulator.

// emuCompiler builds kernel files with the SIMT emulator.
type emuCompiler struct {
	dev  *simt.Device
	mode simt.Mode
	// patch, when set, rewrites each source file first (tests inject
	// bugs with it).
	patch func(name string, src []byte) []byte
}

func (c emuCompiler) image(file string) ([]byte, error) {
	main, headers, err := programOf(file)
	if err != nil {
		return nil, err
	}
	if c.patch != nil {
		main = c.patch(file, main)
		for n, h := range headers {
			headers[n] = c.patch(n, h)
		}
	}
	p := simt.Program{Dialect: simt.CUDA, Main: simt.Source{Name: file, Text: main}}
	for _, n := range gpu.SortedNames(headers) {
		p.Headers = append(p.Headers, simt.Source{Name: n, Text: headers[n]})
	}
	return c.dev.ModuleImage(p, c.mode)
}

func (c emuCompiler) String() string {
	return fmt.Sprintf("SIMT emulator, %s build (%s)", c.mode, c.dev.Toolchain().Version)
}

// ---------------------------------------------------------------------
// NVRTC.

// nvrtcAPI is the NVRTC subset the backend calls.
type nvrtcAPI struct {
	lib         string
	version     func(major, minor *int32) int32
	create      func(prog *uintptr, src string, name string, nh int32, headers, names unsafe.Pointer) int32
	compile     func(prog uintptr, nopts int32, opts unsafe.Pointer) int32
	cubinSize   func(prog uintptr, n *uint64) int32
	cubin       func(prog uintptr, out *byte) int32
	logSize     func(prog uintptr, n *uint64) int32
	log         func(prog uintptr, out *byte) int32
	destroy     func(prog *uintptr) int32
	errorString func(r int32) unsafe.Pointer
}

// loadNVRTC binds NVRTC from the first place of the search
// (libSearch.candidates) where it loads.
func loadNVRTC() (*nvrtcAPI, error) {
	var errs []string
	for _, c := range defaultLibSearch().candidates(nvrtcLib) {
		h, err := dlopenCandidate(c)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		n := &nvrtcAPI{lib: c.Lib}
		for _, f := range []struct {
			ptr  any
			name string
		}{
			{&n.version, "nvrtcVersion"}, {&n.create, "nvrtcCreateProgram"}, {&n.compile, "nvrtcCompileProgram"},
			{&n.cubinSize, "nvrtcGetCUBINSize"}, {&n.cubin, "nvrtcGetCUBIN"},
			{&n.logSize, "nvrtcGetProgramLogSize"}, {&n.log, "nvrtcGetProgramLog"},
			{&n.destroy, "nvrtcDestroyProgram"}, {&n.errorString, "nvrtcGetErrorString"},
		} {
			sym, err := dynlib.Sym(h, f.name)
			if err != nil {
				return nil, fmt.Errorf("%s lacks %s: %w", c.Lib, f.name, err)
			}
			purego.RegisterFunc(f.ptr, sym)
		}
		return n, nil
	}
	return nil, fmt.Errorf("no NVRTC library found (set $KERNBENCH_NVRTC or $CUDA_HOME; %s)", strings.Join(errs, "; "))
}

// nvrtcCompiler compiles kernel files to cubins for one architecture,
// cached on disk by source, options, NVRTC version and architecture.
type nvrtcCompiler struct {
	api     *nvrtcAPI
	arch    string // "sm_90"
	version string // "12.4"
	opts    []string
}

func newNVRTCCompiler(arch string) (*nvrtcCompiler, error) {
	api, err := loadNVRTC()
	if err != nil {
		return nil, err
	}
	var major, minor int32
	if r := api.version(&major, &minor); r != 0 {
		return nil, fmt.Errorf("nvrtcVersion: %s", cString(api.errorString(r)))
	}
	opts := []string{"--gpu-architecture=" + arch, "-std=c++17", "-DKB_NVRTC=1"}
	// Line information lets a profiler (ncu) map instructions to source
	// lines. NVRTC 11.8 crashes with it on some files for sm_90, so older
	// NVRTCs leave it out there.
	if major >= 12 || arch < "sm_90" {
		opts = append(opts, "-lineinfo")
	}
	for _, dir := range cudaIncludeDirs() {
		opts = append(opts, "--include-path="+dir)
	}
	return &nvrtcCompiler{api: api, arch: arch, version: fmt.Sprintf("%d.%d", major, minor), opts: opts}, nil
}

// cudaIncludeDirs returns the CUDA toolkit's include folders that exist
// ($CUDA_PATH/include, /usr/local/cuda/include), for cuda_fp16.h.
func cudaIncludeDirs() []string {
	var out []string
	for _, d := range []string{filepath.Join(os.Getenv("CUDA_PATH"), "include"), "/usr/local/cuda/include"} {
		if _, err := os.Stat(filepath.Join(d, "cuda_fp16.h")); err == nil && !strings.HasPrefix(d, "include") {
			out = append(out, d)
		}
	}
	return out
}

func (c *nvrtcCompiler) String() string {
	return fmt.Sprintf("NVRTC %s (%s), %s", c.version, c.api.lib, strings.Join(c.opts, " "))
}

func (c *nvrtcCompiler) image(file string) ([]byte, error) {
	cubin, _, err := c.cachedCompile(file)
	return cubin, err
}

// cachedCompile returns file's cubin and NVRTC's log, from the cache
// when they are there.
func (c *nvrtcCompiler) cachedCompile(file string) (cubin []byte, log string, err error) {
	main, headers, err := programOf(file)
	if err != nil {
		return nil, "", err
	}
	names := gpu.SortedNames(headers)
	path := c.cachePath(file, main, headers, names)
	if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
		if l, err := os.ReadFile(path + ".log"); err == nil {
			return b, string(l), nil
		}
	}
	cubin, log, err = c.compile(file, main, headers, names)
	if err != nil {
		return nil, log, err
	}
	storeCubin(path, cubin, log)
	return cubin, log, nil
}

// cachePath returns where c's build of a program is cached: a name
// keyed by the NVRTC version, architecture, options and sources.
func (c *nvrtcCompiler) cachePath(file string, main []byte, headers map[string][]byte, names []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%s\n", c.version, c.arch, strings.Join(c.opts, " "), file)
	h.Write(main)
	for _, n := range names {
		fmt.Fprintf(h, "\n%s\n", n)
		h.Write(headers[n])
	}
	key := hex.EncodeToString(h.Sum(nil))[:24]
	return filepath.Join(cubinCacheDir(), file+"-"+c.arch+"-"+key+".cubin")
}

// storeCubin writes a cubin and its log to the cache at path, each
// through a rename, so that a reader sees whole files or none; a cache
// that cannot be written is left alone.
func storeCubin(path string, cubin []byte, log string) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
		tmp := path + ".tmp" + fmt.Sprint(os.Getpid())
		if os.WriteFile(tmp+".log", []byte(log), 0o644) == nil && os.Rename(tmp+".log", path+".log") == nil &&
			os.WriteFile(tmp, cubin, 0o644) == nil {
			os.Rename(tmp, path)
		}
	}
}

// cubinCacheDir is where compiled kernels are kept:
// $KERNBENCH_CUDA_CACHE, or kernbench/cuda under the user cache directory.
func cubinCacheDir() string {
	if d := os.Getenv("KERNBENCH_CUDA_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "kernbench", "cuda")
}

// cstrings returns NUL-terminated copies of ss and an array of pointers
// to them, both pinned by p.
func cstrings(p *runtime.Pinner, ss []string) unsafe.Pointer {
	if len(ss) == 0 {
		return nil
	}
	ptrs := make([]unsafe.Pointer, len(ss))
	for i, s := range ss {
		b := append([]byte(s), 0)
		p.Pin(&b[0])
		ptrs[i] = unsafe.Pointer(&b[0])
	}
	p.Pin(&ptrs[0])
	return unsafe.Pointer(&ptrs[0])
}

// compile returns file's cubin and NVRTC's log (its warnings, and
// ptxas's report where the options ask for one).
func (c *nvrtcCompiler) compile(file string, main []byte, headers map[string][]byte, names []string) (cubin []byte, log string, err error) {
	var pin runtime.Pinner
	defer pin.Unpin()
	srcs := make([]string, len(names))
	for i, n := range names {
		srcs[i] = string(headers[n])
	}
	var prog uintptr
	if r := c.api.create(&prog, string(main), file, int32(len(names)), cstrings(&pin, srcs), cstrings(&pin, names)); r != 0 {
		return nil, "", fmt.Errorf("cuda: nvrtcCreateProgram %s: %s", file, cString(c.api.errorString(r)))
	}
	defer c.api.destroy(&prog)
	r := c.api.compile(prog, int32(len(c.opts)), cstrings(&pin, c.opts))
	var n uint64
	c.api.logSize(prog, &n)
	if n > 1 {
		b := make([]byte, n)
		c.api.log(prog, &b[0])
		log = strings.TrimRight(string(b), "\x00\n")
	}
	if r != 0 {
		return nil, log, fmt.Errorf("cuda: NVRTC cannot compile %s (%s):\n%s", file, cString(c.api.errorString(r)), log)
	}
	if r := c.api.cubinSize(prog, &n); r != 0 || n == 0 {
		return nil, log, errors.New("cuda: nvrtcGetCUBINSize: " + cString(c.api.errorString(r)))
	}
	out := make([]byte, n)
	if r := c.api.cubin(prog, &out[0]); r != 0 {
		return nil, log, errors.New("cuda: nvrtcGetCUBIN: " + cString(c.api.errorString(r)))
	}
	return out, log, nil
}
