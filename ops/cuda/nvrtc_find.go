package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kernbench/kernbench/internal/dynlib"
)

// NVRTCSearchOrder returns the places NVRTC is looked for on this
// machine, in order, each as "path (why)": the libraries that exist and
// the sonames the dynamic loader is asked for.
func NVRTCSearchOrder() []string { return defaultLibSearch().order(nvrtcLib) }

// order returns the places lib is looked for, each as "path (why)".
func (s libSearch) order(lib toolkitLib) []string {
	var out []string
	for _, c := range s.candidates(lib) {
		l := c.Lib + " (" + c.From
		if c.Companion != "" {
			l += ", with " + filepath.Base(c.Companion)
		}
		out = append(out, l+")")
	}
	return out
}

// NVRTCLibrary returns the NVRTC library the backend loads and its
// version ("12.4"), or why there is none.
func NVRTCLibrary() (lib, version string, err error) {
	api, err := loadNVRTC()
	if err != nil {
		return "", "", err
	}
	var major, minor int32
	if r := api.version(&major, &minor); r != 0 {
		return api.lib, "", fmt.Errorf("nvrtcVersion: %s", cString(api.errorString(r)))
	}
	return api.lib, fmt.Sprintf("%d.%d", major, minor), nil
}

// dlopenCandidate loads a candidate library, its companion first: NVRTC
// opens its builtins by soname when it compiles, and cuBLAS needs
// cuBLASLt; one loaded already is the one they get. A companion that
// does not load is left to the library to find.
func dlopenCandidate(c libCandidate) (uintptr, error) {
	if c.Companion != "" {
		dlopenGlobal(c.Companion)
	}
	return dlopen(c.Lib)
}

// dlopenGlobal loads a library whose symbols and soname later loads may
// use (NVRTC's builtins, cuBLASLt).
func dlopenGlobal(path string) (uintptr, error) {
	return dynlib.Open(path, dynlib.Global)
}

// A toolkitLib is a CUDA toolkit library the backend loads at run time,
// and where it is looked for besides the toolkits (see candidates).
type toolkitLib struct {
	// Name is the library's file name before ".so" ("libnvrtc").
	Name string
	// Env names a variable that may give the library or its folder.
	Env string
	// Sonames are the names the dynamic loader is asked for, newest first.
	Sonames []string
	// Wheels are the folders NVIDIA's pip wheels put it in, under a
	// Python environment's site-packages.
	Wheels []string
	// Companion is a library of the same folder and major version to
	// load first ("libnvrtc-builtins", which NVRTC opens by soname when
	// it compiles), or "".
	Companion string
}

// nvrtcLib is NVRTC: nvidia-cuda-nvrtc-cu12 puts it in
// nvidia/cuda_nvrtc/lib, the CUDA 13 wheels in nvidia/cu13/lib.
var nvrtcLib = toolkitLib{
	Name:      "libnvrtc",
	Env:       "KERNBENCH_NVRTC",
	Sonames:   []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"},
	Wheels:    []string{"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"},
	Companion: "libnvrtc-builtins",
}

// A libCandidate is one place a library may load from: a path, or a
// bare soname for the dynamic loader to find. Companion is the
// toolkitLib's companion beside a path, loaded first so that the library
// finds it by its soname even where the folder is not on the loader's
// path (a pip wheel's folder).
type libCandidate struct {
	Lib, Companion string
	// From says why the place is searched ("$CUDA_HOME", "pip wheel").
	From string
}

// libSearch describes where libraries are looked for. Root prefixes the
// system folders (/usr/local/cuda, /usr/lib/python3...): "/" in use, a
// test's folder in tests; Getenv reads the environment.
type libSearch struct {
	Root   string
	Getenv func(string) string
}

// defaultLibSearch is the search the backend makes.
func defaultLibSearch() libSearch { return libSearch{Root: "/", Getenv: os.Getenv} }

// candidates returns the places lib is looked for, in order:
//
//  1. $<lib.Env> (KERNBENCH_NVRTC), a library file or a folder holding
//     one;
//  2. the toolkit the environment names: $CUDA_HOME, $CUDA_PATH,
//     $CUDA_ROOT (their lib64 and lib);
//  3. the dynamic loader's own search (LD_LIBRARY_PATH, the ldconfig
//     cache) for lib.Sonames (libnvrtc.so.13, .12, .11.2, libnvrtc.so);
//  4. the toolkits installed in the usual place: /usr/local/cuda, then
//     /usr/local/cuda-X.Y, newest first (lib64, lib and
//     targets/<arch>-linux/lib);
//  5. NVIDIA's pip wheels (lib.Wheels) under the Python environments:
//     $VIRTUAL_ENV, $CONDA_PREFIX, $PYTHONPATH's folders, ~/.local,
//     /usr/local, /usr and /opt/conda.
//
// A folder gives its newest <name>.so* (.so.13 before .so.12 before
// .so.11.2 before the unversioned name), with the companion of the same
// major version beside it. Places that hold no library are left out, so
// every path returned exists; the sonames of step 3 are returned as they
// are.
func (s libSearch) candidates(lib toolkitLib) []libCandidate {
	var out []libCandidate
	seen := map[string]bool{}
	add := func(from string, cs ...libCandidate) {
		for _, c := range cs {
			if !seen[c.Lib] {
				seen[c.Lib] = true
				c.From = from
				out = append(out, c)
			}
		}
	}
	if p := s.Getenv(lib.Env); p != "" {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			add("$"+lib.Env, libCandidate{Lib: p, Companion: lib.companionBeside(p)})
		} else {
			add("$"+lib.Env, lib.inDir(p)...)
		}
	}
	for _, env := range []string{"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"} {
		if d := s.Getenv(env); d != "" {
			add("$"+env, lib.inToolkit(d)...)
		}
	}
	for _, n := range lib.Sonames {
		add("the dynamic loader", libCandidate{Lib: n})
	}
	sys := func(p string) string { return filepath.Join(s.Root, p) }
	add("/usr/local/cuda", lib.inToolkit(sys("/usr/local/cuda"))...)
	toolkits, _ := filepath.Glob(sys("/usr/local/cuda-*"))
	slices.SortFunc(toolkits, func(a, b string) int { return compareVersions(b, a) })
	for _, d := range toolkits {
		add("/usr/local/cuda-*", lib.inToolkit(d)...)
	}
	for _, sp := range s.sitePackages() {
		for _, sub := range lib.Wheels {
			add("pip wheel", lib.inDir(filepath.Join(sp, sub))...)
		}
	}
	return out
}

// sitePackages returns the Python package folders that exist, in the
// order candidates searches them.
func (s libSearch) sitePackages() []string {
	var prefixes, direct []string
	for _, env := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if d := s.Getenv(env); d != "" {
			prefixes = append(prefixes, d)
		}
	}
	if pp := s.Getenv("PYTHONPATH"); pp != "" {
		direct = append(direct, filepath.SplitList(pp)...)
	}
	if h := s.Getenv("HOME"); h != "" {
		prefixes = append(prefixes, filepath.Join(h, ".local"))
	}
	for _, p := range []string{"/usr/local", "/usr", "/opt/conda"} {
		prefixes = append(prefixes, filepath.Join(s.Root, p))
	}
	var out []string
	for _, p := range prefixes {
		for _, pat := range []string{"lib/python3*/site-packages", "lib/python3*/dist-packages", "lib/python3/dist-packages"} {
			ds, _ := filepath.Glob(filepath.Join(p, pat))
			slices.SortFunc(ds, func(a, b string) int { return compareVersions(b, a) })
			direct = append(direct, ds...)
		}
	}
	for _, d := range direct {
		if st, err := os.Stat(d); err == nil && st.IsDir() && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// inToolkit returns the library of a toolkit folder.
func (lib toolkitLib) inToolkit(dir string) []libCandidate {
	var out []libCandidate
	subs := []string{"lib64", "lib"}
	targets, _ := filepath.Glob(filepath.Join(dir, "targets", "*-linux", "lib"))
	for _, t := range targets {
		rel, _ := filepath.Rel(dir, t)
		subs = append(subs, rel)
	}
	for _, sub := range subs {
		out = append(out, lib.inDir(filepath.Join(dir, sub))...)
	}
	return out
}

// inDir returns the newest <name>.so* in dir, with its companion, or
// nothing.
func (lib toolkitLib) inDir(dir string) []libCandidate {
	libs, _ := filepath.Glob(filepath.Join(dir, lib.Name+".so*"))
	libs = slices.DeleteFunc(libs, func(p string) bool {
		st, err := os.Stat(p)
		return err != nil || st.IsDir()
	})
	if len(libs) == 0 {
		return nil
	}
	slices.SortFunc(libs, func(a, b string) int { return compareVersions(b, a) })
	return []libCandidate{{Lib: libs[0], Companion: lib.companionBeside(libs[0])}}
}

// companionBeside returns the newest <companion>.so.* in path's folder
// whose major version is path's (any, for an unversioned path), or "".
func (lib toolkitLib) companionBeside(path string) string {
	if lib.Companion == "" {
		return ""
	}
	major := soVersion(filepath.Base(path))
	if i := strings.IndexByte(major, '.'); i >= 0 {
		major = major[:i]
	}
	bs, _ := filepath.Glob(filepath.Join(filepath.Dir(path), lib.Companion+".so.*"))
	bs = slices.DeleteFunc(bs, func(p string) bool {
		v := soVersion(filepath.Base(p))
		return major != "" && v != major && !strings.HasPrefix(v, major+".")
	})
	if len(bs) == 0 {
		return ""
	}
	slices.SortFunc(bs, func(a, b string) int { return compareVersions(b, a) })
	return bs[0]
}

// soVersion returns the version after ".so." in a library's name
// ("12.4" of libnvrtc-builtins.so.12.4), or "".
func soVersion(name string) string {
	if i := strings.Index(name, ".so."); i >= 0 {
		return name[i+len(".so."):]
	}
	return ""
}

// compareVersions orders two names by the numbers in them, field by
// field ("cuda-12.10" after "cuda-12.4", "libnvrtc.so.12" after
// "libnvrtc.so"), then as strings.
func compareVersions(a, b string) int {
	na, nb := versionNumbers(a), versionNumbers(b)
	if c := slices.Compare(na, nb); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// versionNumbers returns the runs of digits in s.
func versionNumbers(s string) []int {
	var out []int
	for i := 0; i < len(s); {
		if s[i] < '0' || s[i] > '9' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		n, _ := strconv.Atoi(s[i:j])
		out = append(out, n)
		i = j
	}
	return out
}
