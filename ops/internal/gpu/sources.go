package gpu

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
)

// shared holds the headers every GPU dialect includes: blocks.h, the
// type numbers and block formats.
//
//go:embed kernels/blocks.h
var shared embed.FS

// SharedHeaders returns the headers every dialect includes, by name.
var SharedHeaders = sync.OnceValues(func() (map[string][]byte, error) { return ReadSources(shared, "kernels") })

// ReadSources returns the files of fsys's folder dir by name.
func ReadSources(fsys fs.FS, dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		out[path.Base(p)] = b
		return err
	})
	return out, err
}

// Sources is a backend's kernel sources: each file ending in Main (.cu,
// .metal) is a compilation unit, each ending in Header (.cuh, .h) a
// header any of them may include, and the shared headers come with them.
type Sources struct {
	Backend      string // for errors: "cuda", "metal"
	Main, Header string
	// Files returns the backend's kernel files by name.
	Files func() (map[string][]byte, error)
}

// Program returns kernel file with the headers it may include: the
// backend's and the shared ones.
func (s Sources) Program(file string) (main []byte, headers map[string][]byte, err error) {
	srcs, err := s.Files()
	if err != nil {
		return nil, nil, err
	}
	main, ok := srcs[file]
	if !ok || !strings.HasSuffix(file, s.Main) {
		return nil, nil, fmt.Errorf("%s: no kernel source %s", s.Backend, file)
	}
	common, err := SharedHeaders()
	if err != nil {
		return nil, nil, err
	}
	headers = map[string][]byte{}
	for name, b := range common {
		headers[name] = b
	}
	for name, b := range srcs {
		if strings.HasSuffix(name, s.Header) {
			if _, dup := headers[name]; dup {
				return nil, nil, fmt.Errorf("%s: kernel header %s has the name of a shared header", s.Backend, name)
			}
			headers[name] = b
		}
	}
	return main, headers, nil
}

// SortedNames returns m's keys in order.
func SortedNames(m map[string][]byte) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
