package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// An Output is a file a command is to write, and the flag that names it
// ("" for a positional argument).
type Output struct {
	Flag, Path string
}

// An Input is a file a command reads, and the flag that names it ("" for
// a positional argument).
type Input struct {
	Flag, Path string
}

func (in Input) what() string {
	if in.Flag == "" {
		return "the input " + in.Path
	}
	return fmt.Sprintf("the input %s (-%s)", in.Path, in.Flag)
}

// CheckOutputs checks, before a command does any work, that each output
// can be written: it names a file, not a folder, in a folder that exists
// and takes new files, and it is neither one of inputs nor another
// output. Files are compared by identity (os.SameFile), so another
// spelling of a path, a symbolic link and a hard link are caught. Inputs
// that do not exist are passed over (the command reports them when it
// opens them). The error is a *UsageError naming the output's flag.
func CheckOutputs(inputs []Input, outputs ...Output) error {
	for i, o := range outputs {
		if err := checkOutput(o, inputs, outputs[:i]); err != nil {
			return &UsageError{Flag: o.Flag, Msg: err.Error()}
		}
	}
	return nil
}

func checkOutput(o Output, inputs []Input, earlier []Output) error {
	if o.Path == "" {
		return errors.New("no output file named")
	}
	st, err := os.Stat(o.Path)
	switch {
	case err == nil && st.IsDir():
		return fmt.Errorf("%s is a folder, not a file", o.Path)
	case err != nil && !missing(err):
		return err
	}
	for _, in := range inputs {
		if in.Path == "" {
			continue
		}
		if same(o.Path, in.Path) {
			return fmt.Errorf("%s is %s: writing it would destroy the input", o.Path, in.what())
		}
	}
	for _, e := range earlier {
		if same(o.Path, e.Path) {
			return fmt.Errorf("%s is also the output of -%s", o.Path, e.Flag)
		}
	}
	return checkFolder(filepath.Dir(o.Path))
}

// CheckFolder checks that dir is a folder that takes new files (a
// command's output folder, such as opbench sweep's -out), or that it can
// be made: the nearest folder above it that exists takes new files. The
// error is a *UsageError naming flag.
func CheckFolder(flag, dir string) error {
	d := dir
	for {
		st, err := os.Stat(d)
		if missing(err) && filepath.Dir(d) != d {
			d = filepath.Dir(d)
			continue
		}
		if err == nil && !st.IsDir() {
			err = fmt.Errorf("%s is not a folder", d)
		}
		if err == nil {
			err = checkFolder(d)
		}
		if err != nil {
			return &UsageError{Flag: flag, Msg: err.Error()}
		}
		return nil
	}
}

// checkFolder checks that dir exists and that a file can be created in
// it.
func checkFolder(dir string) error {
	st, err := os.Stat(dir)
	if missing(err) {
		// Name a file in the way, if any.
		for d := filepath.Dir(dir); d != filepath.Dir(d); d = filepath.Dir(d) {
			if st, err := os.Stat(d); err == nil {
				if !st.IsDir() {
					return fmt.Errorf("%s is not a folder", d)
				}
				break
			}
		}
		return fmt.Errorf("folder %s does not exist", dir)
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	f, err := os.CreateTemp(dir, ".kernbench-probe-*")
	if err != nil {
		return fmt.Errorf("cannot write in folder %s: %w", dir, errors.Unwrap(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// missing reports whether err says a path does not exist: no such file,
// or a file where the path needs a folder.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// same reports whether paths a and b name one existing file, or are the
// same path once cleaned (for files not yet written).
func same(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	if err1 == nil && err2 == nil {
		return os.SameFile(sa, sb)
	}
	aa, err1 := filepath.Abs(a)
	ab, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == ab
}

// An AtomicFile is an output file written under a temporary name in the
// folder of its path (STEM.tmpNNN.EXT for STEM.EXT, so that a program
// that goes by the extension, such as Graphviz's dot, can write it) and
// renamed to the path by Commit, so
// that the path holds either what it held before or the whole new file,
// never a part. Abort, an error or SIGINT/SIGTERM before Commit removes
// the temporary file (see the package's signal handling).
type AtomicFile struct {
	*os.File        // the temporary file
	path     string // the file it becomes
	done     bool
}

// CreateAtomic starts the output file path.
func CreateAtomic(path string) (*AtomicFile, error) {
	base := filepath.Base(path)
	ext := filepath.Ext(base)
	f, err := os.CreateTemp(filepath.Dir(path), strings.TrimSuffix(base, ext)+".tmp*"+ext)
	if err != nil {
		return nil, err
	}
	track(f.Name())
	return &AtomicFile{File: f, path: path}, nil
}

// Path returns the path the file becomes.
func (f *AtomicFile) Path() string { return f.path }

// Commit closes the file and gives it its path (mode 0644, as os.Create
// with the usual umask). After Commit, Abort does nothing. The file may
// have been closed (or written by another program) since CreateAtomic.
func (f *AtomicFile) Commit() error {
	if f.done {
		return errors.New("cli: AtomicFile committed twice")
	}
	err := f.File.Close()
	if errors.Is(err, os.ErrClosed) {
		err = nil
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), f.path)
	}
	if err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	f.done = true
	untrack(f.Name())
	return nil
}

// SetPath changes the path the file becomes, in the same folder, such as
// to try another name after CommitNew found one taken.
func (f *AtomicFile) SetPath(path string) { f.path = path }

// CommitNew is Commit, except that it gives the file its path only when
// no file has that path: otherwise it returns an error wrapping
// fs.ErrExist and leaves the file uncommitted, so that the caller can
// SetPath another path and try again. Where the file system has hard
// links, taking the path is atomic: of two processes that commit to one
// path, one gets it, the other the error.
func (f *AtomicFile) CommitNew() error {
	if f.done {
		return errors.New("cli: AtomicFile committed twice")
	}
	err := f.File.Close()
	if errors.Is(err, os.ErrClosed) {
		err = nil
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Link(f.Name(), f.path)
		switch {
		case errors.Is(err, fs.ErrExist):
			return fmt.Errorf("writing %s: %w", f.path, err)
		case err == nil:
			os.Remove(f.Name())
		default: // no hard links here: look, then rename
			if _, serr := os.Lstat(f.path); serr == nil {
				return fmt.Errorf("writing %s: %w", f.path, fs.ErrExist)
			}
			err = os.Rename(f.Name(), f.path)
		}
	}
	if err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	f.done = true
	untrack(f.Name())
	return nil
}

// Abort closes and removes the temporary file, leaving the path as it
// was. It does nothing after Commit or a first Abort.
func (f *AtomicFile) Abort() {
	if f == nil || f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.Name())
	untrack(f.Name())
}

// WriteAtomic writes path through an AtomicFile: write gets a buffered
// writer on the temporary file, and the file replaces path only when
// write and the flush succeed.
func WriteAtomic(path string, write func(w io.Writer) error) error {
	f, err := CreateAtomic(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}

// Temporary files of AtomicFiles not yet committed, removed on SIGINT or
// SIGTERM: while there is one, the package holds those signals; on one,
// it removes them, restores the signal's default handling and raises it
// again, so the process ends as the signal would have ended it (status
// 130 for SIGINT in a shell). With none left it lets the signals go.
var pending struct {
	sync.Mutex
	files map[string]bool
	ch    chan os.Signal
}

// track adds a temporary file to remove on a signal.
func track(name string) {
	pending.Lock()
	defer pending.Unlock()
	if pending.files == nil {
		pending.files = map[string]bool{}
	}
	pending.files[name] = true
	if pending.ch == nil {
		pending.ch = make(chan os.Signal, 1)
		signal.Notify(pending.ch, os.Interrupt, syscall.SIGTERM)
		go onSignal(pending.ch)
	}
}

// untrack drops a temporary file that was committed or removed.
func untrack(name string) {
	pending.Lock()
	defer pending.Unlock()
	delete(pending.files, name)
	if len(pending.files) == 0 && pending.ch != nil {
		signal.Stop(pending.ch)
		close(pending.ch)
		pending.ch = nil
	}
}

// onSignal removes the temporary files when a signal comes on ch, and
// ends the process by that signal.
func onSignal(ch chan os.Signal) {
	sig, ok := <-ch
	if !ok {
		return
	}
	pending.Lock() // held to the end: no file is tracked or committed after
	for name := range pending.files {
		os.Remove(name)
	}
	signal.Reset(sig)
	if p, err := os.FindProcess(os.Getpid()); err == nil && p.Signal(sig) == nil {
		time.Sleep(2 * time.Second) // the signal ends the process
	}
	code := 1
	if s, ok := sig.(syscall.Signal); ok {
		code = 128 + int(s)
	}
	os.Exit(code)
}
