package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kernbench/kernbench/bench"
	"github.com/kernbench/kernbench/internal/cli"
)

// setPlace is where a command writes its record set: the folder and the
// base name of its .json and .csv, which writeSet makes unique when the
// name was not given.
type setPlace struct {
	dir, name string
	unique    bool
}

// placeSet settles cmd's -out and -name: the folder is -out, else
// results/<machine ID>, made if missing; the name is -name, else
// prefix-<date>-<time>. A named set replaces its files (name plus each of
// exts, by default .json and .csv), but never one of inputs. It returns
// the exit code to stop with, or -1 to go on.
func placeSet(stderr io.Writer, cmd, out, name, prefix, machineID string, inputs []cli.Input, exts ...string) (setPlace, int) {
	if out == "" {
		out = filepath.Join("results", machineID)
	}
	if err := cli.CheckFolder("out", out); err != nil {
		return setPlace{}, usageError(stderr, cmd, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintf(stderr, "opbench %s: -out: %v\n", cmd, err)
		return setPlace{}, exitFailure
	}
	p := setPlace{dir: out, name: name}
	if name == "" {
		p.name, p.unique = prefix+"-"+now().Format("20060102-150405"), true
		return p, -1
	}
	if len(exts) == 0 {
		exts = []string{".json", ".csv"}
	}
	var outs []cli.Output
	for _, e := range exts {
		outs = append(outs, cli.Output{Flag: "name", Path: filepath.Join(out, name+e)})
	}
	if err := cli.CheckOutputs(inputs, outs...); err != nil {
		return setPlace{}, usageError(stderr, cmd, err)
	}
	return p, -1
}

// writeSet writes the set as DIR/NAME.json and DIR/NAME.csv, each
// atomically, and returns their paths and the name used. With unique,
// NAME is name, or name-2, name-3, ... when a file of that name exists,
// so that no file is replaced, even by a sweep writing into DIR at the
// same moment; otherwise NAME is name and its files are replaced.
func writeSet(s *bench.Set, dir, name string, unique bool) (paths []string, used string, err error) {
	var js, cs bytes.Buffer
	if err := s.WriteJSON(&js); err != nil {
		return nil, "", err
	}
	if err := s.WriteCSV(&cs); err != nil {
		return nil, "", err
	}
	return writeFiles(dir, name, unique, []string{".json", ".csv"}, map[string][]byte{".json": js.Bytes(), ".csv": cs.Bytes()})
}

// writeFiles writes DIR/NAME.EXT with data[EXT] for each of exts, each
// atomically, and returns their paths and the name used; unique as for
// writeSet.
func writeFiles(dir, name string, unique bool, exts []string, data map[string][]byte) (paths []string, used string, err error) {
	if !unique {
		for _, ext := range exts {
			path := filepath.Join(dir, name+ext)
			if err := cli.WriteAtomic(path, func(w io.Writer) error { _, err := w.Write(data[ext]); return err }); err != nil {
				return paths, name, err
			}
			paths = append(paths, path)
		}
		return paths, name, nil
	}
	for i := 1; i <= 1000; i++ {
		used = name
		if i > 1 {
			used = fmt.Sprintf("%s-%d", name, i)
		}
		paths, err = commitNew(dir, used, exts, data)
		if !errors.Is(err, fs.ErrExist) {
			return paths, used, err
		}
	}
	return nil, "", fmt.Errorf("no free name %s-N in %s", name, dir)
}

// commitNew writes DIR/NAME.EXT for each of exts with data[EXT], each only
// if no such file exists. When one exists, it removes those it wrote and
// returns an error wrapping fs.ErrExist.
func commitNew(dir, name string, exts []string, data map[string][]byte) ([]string, error) {
	var paths []string
	for _, ext := range exts {
		f, err := cli.CreateAtomic(filepath.Join(dir, name+ext))
		if err == nil {
			_, err = f.Write(data[ext])
			if err == nil {
				err = f.CommitNew()
			}
			f.Abort() // nothing after a commit
		}
		if err != nil {
			for _, p := range paths {
				os.Remove(p) // new, and ours
			}
			return nil, err
		}
		paths = append(paths, f.Path())
	}
	return paths, nil
}

// writeJSONFile writes v as indented JSON, with a final newline, to path
// (replaced whole: a reader never sees half a file).
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return cli.WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}
