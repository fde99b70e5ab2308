package simt

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// tlsSym is a thread-local symbol of a module: a __shared__ or
// threadgroup variable, at an offset in the module's TLS block.
type tlsSym struct {
	name      string
	off, size uint64
	// red: a function-scope array, whose size includes its red zone.
	red bool
}

// sharedVar says where offset off of the module's shared memory (its TLS
// block) is: "shared variable buf of reduce, byte 12 of 1024", "dynamic
// shared memory, byte 8", or the bare offset when no symbol covers it.
func (m *Module) sharedVar(off int64) string {
	m.symOnce.Do(m.loadTLSSyms)
	if off < 0 {
		return ""
	}
	o := uint64(off)
	i := sort.Search(len(m.tls), func(i int) bool { return m.tls[i].off > o }) - 1
	if i < 0 || o >= m.tls[i].off+m.tls[i].size {
		return fmt.Sprintf("static shared memory, offset %d", o)
	}
	s := m.tls[i]
	if s.name == "kbs_dyn_smem" {
		return fmt.Sprintf("dynamic shared memory, byte %d", o-s.off)
	}
	return fmt.Sprintf("shared variable %s, byte %d of %d", s.name, o-s.off, s.size)
}

// arrayOverrun says where an access at offset off ran past the shared
// array whose red zone starts at red: "byte 1024 of shared array buf of
// reduce, which has 1024 bytes".
func (m *Module) arrayOverrun(off, red int64) string {
	m.symOnce.Do(m.loadTLSSyms)
	i := sort.Search(len(m.tls), func(i int) bool { return m.tls[i].off > uint64(red) }) - 1
	if i < 0 || uint64(red) >= m.tls[i].off+m.tls[i].size {
		return fmt.Sprintf("%d bytes past the end of a shared array", off-red)
	}
	s := m.tls[i]
	return fmt.Sprintf("byte %d of shared array %s, which has %d bytes", uint64(off)-s.off, s.name, uint64(red)-s.off)
}

func (m *Module) loadTLSSyms() {
	f, err := elf.Open(m.path)
	if err != nil {
		return
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return
	}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_TLS || s.Size == 0 {
			continue
		}
		m.tls = append(m.tls, tlsSym{name: s.Name, off: s.Value, size: s.Size, red: strings.Contains(s.Name, "kbs_sh_")})
	}
	sort.Slice(m.tls, func(i, j int) bool { return m.tls[i].off < m.tls[j].off })
	// Demangle: static locals are _ZZ<function>E<name>.
	if m.dev.tc.Cxxfilt == "" || len(m.tls) == 0 {
		return
	}
	in := make([]string, len(m.tls))
	for i, s := range m.tls {
		in[i] = s.name
	}
	cmd := exec.Command(m.dev.tc.Cxxfilt)
	cmd.Stdin = strings.NewReader(strings.Join(in, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(m.tls) {
		return
	}
	for i := range m.tls {
		// "reduce(float const*, float*, int)::buf" reads better as
		// "buf of reduce".
		name := lines[i]
		if p := strings.LastIndex(name, "::"); p >= 0 && name != "kbs_dyn_smem" {
			fn, v := name[:p], name[p+2:]
			if q := strings.IndexByte(fn, '('); q >= 0 {
				fn = fn[:q]
			}
			name = strings.TrimPrefix(v, "kbs_sh_") + " of " + fn
		}
		m.tls[i].name = name
	}
}

// where resolves code addresses of device code to source lines ("k.cu:12
// (write) in reduce"), skipping frames in the emulator's own headers. It
// returns nil when the module has no line information or addr2line is
// missing.
func (m *Module) where(pcs []uint64, writes []bool) []string {
	if m.dev.tc.Addr2line == "" || m.mode != Checked {
		return nil
	}
	args := []string{"-e", m.path, "-f", "-C", "-i", "-a"}
	var n int
	for _, pc := range pcs {
		if pc == 0 || pc <= m.base {
			continue
		}
		args = append(args, fmt.Sprintf("%#x", pc-m.base-1))
		n++
	}
	if n == 0 {
		return nil
	}
	out, err := exec.Command(m.dev.tc.Addr2line, args...).Output()
	if err != nil {
		return nil
	}
	// Output: per address, "0x...", then pairs of lines: function, then
	// file:line, innermost inlined frame first.
	type frame struct{ fn, loc string }
	var groups [][]frame
	sc := bufio.NewScanner(bytes.NewReader(out))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "0x") {
			groups = append(groups, nil)
			continue
		}
		if len(groups) == 0 || i+1 >= len(lines) {
			break
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], frame{fn: lines[i], loc: lines[i+1]})
		i++
	}
	var res []string
	gi := 0
	for k, pc := range pcs {
		if pc == 0 || pc <= m.base {
			continue
		}
		if gi >= len(groups) {
			break
		}
		g := groups[gi]
		gi++
		var pick *frame
		for j := range g {
			loc := g[j].loc
			if strings.HasPrefix(loc, "??") {
				continue
			}
			if strings.Contains(loc, "kbsimt_") || strings.Contains(loc, "<kbsimt") {
				continue
			}
			pick = &g[j]
			break
		}
		if pick == nil {
			continue
		}
		loc := pick.loc
		if p := strings.Index(loc, " (discriminator"); p >= 0 {
			loc = loc[:p]
		}
		file, line, _ := strings.Cut(loc, ":")
		fn := pick.fn
		if p := strings.IndexByte(fn, '('); p > 0 {
			fn = fn[:p]
		}
		kind := "read"
		if writes[k] {
			kind = "write"
		}
		res = append(res, fmt.Sprintf("%s:%s (%s) in %s", filepath.Base(file), line, kind, fn))
	}
	return res
}
