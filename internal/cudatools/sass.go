package cudatools

import (
	"bufio"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// SASS is one function's disassembly, reduced to opcode counts.
type SASS struct {
	Name string
	Arch string // "sm_90", from the listing's "code for" line
	// Opcodes counts the static instructions by full opcode, modifiers
	// included ("LDG.E.128.CONSTANT", "FFMA", "IDP.4A.S8.S8").
	Opcodes map[string]int
	// Total is the number of static instructions.
	Total int
}

var (
	reCodeFor  = regexp.MustCompile(`^code for (sm_\w+)$`)
	reFunction = regexp.MustCompile(`^Function : (\S+)$`)
	// An instruction line: /*00a0*/ [@P0|@!PT] OPCODE[.MOD...] [operands] ;
	reInstr = regexp.MustCompile(`^/\*([0-9a-f]{4,})\*/\s+(?:\{\s*)?(@!?U?P(?:T|\d+)\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)(?:\s|;)`)
	// An encoding-only line of cuobjdump's two-line form.
	reEncoding = regexp.MustCompile(`^/\* 0x[0-9a-f]{16} \*/$`)
)

// ParseSASS reads cuobjdump -sass output (one or more "Function :"
// sections, each after a "code for sm_XX" line) and returns each
// function's opcode counts in listing order. An instruction before any
// function, a function with no instructions, or an offset line that does
// not hold an instruction is an error naming the line.
func ParseSASS(text string) ([]SASS, error) {
	var out []SASS
	arch := ""
	var cur *SASS
	finish := func() error {
		if cur == nil {
			return nil
		}
		if cur.Total == 0 {
			return fmt.Errorf("SASS listing: function %s has no instructions", cur.Name)
		}
		out = append(out, *cur)
		cur = nil
		return nil
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || reEncoding.MatchString(line) || strings.HasPrefix(line, "."):
			continue
		case reCodeFor.MatchString(line):
			if err := finish(); err != nil {
				return nil, err
			}
			arch = reCodeFor.FindStringSubmatch(line)[1]
			continue
		case reFunction.MatchString(line):
			if err := finish(); err != nil {
				return nil, err
			}
			cur = &SASS{Name: reFunction.FindStringSubmatch(line)[1], Arch: arch, Opcodes: map[string]int{}}
			continue
		case !strings.HasPrefix(line, "/*"):
			// Banners ("Fatbin elf code:", "====", "arch = sm_90", ...).
			continue
		}
		m := reInstr.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("SASS listing, line %d: cannot read an instruction in %q", n, line)
		}
		if cur == nil {
			return nil, fmt.Errorf("SASS listing, line %d: instruction before any \"Function :\" line", n)
		}
		cur.Opcodes[m[3]]++
		cur.Total++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("SASS listing: %w", err)
	}
	if err := finish(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("SASS listing: no functions (is this cuobjdump -sass output?)")
	}
	return out, nil
}

// A Class is a group of opcodes that shows one technique.
type Class struct {
	Name string
	// Doc says what the class shows.
	Doc   string
	match func(op string) bool
}

// base is an opcode's first part ("LDG" of "LDG.E.128").
func base(op string) string {
	b, _, _ := strings.Cut(op, ".")
	return b
}

// hasMod reports whether op has modifier m.
func hasMod(op, m string) bool {
	parts := strings.Split(op, ".")
	for _, p := range parts[1:] {
		if p == m {
			return true
		}
	}
	return false
}

// width returns a global/shared/local load or store's access width in
// bits from its modifiers: U8/S8, U16/S16, 64, 128, else 32.
func width(op string) int {
	switch {
	case hasMod(op, "U8") || hasMod(op, "S8"):
		return 8
	case hasMod(op, "U16") || hasMod(op, "S16"):
		return 16
	case hasMod(op, "64"):
		return 64
	case hasMod(op, "128"):
		return 128
	}
	return 32
}

func isBase(names ...string) func(string) bool {
	return func(op string) bool {
		b := base(op)
		for _, n := range names {
			if b == n {
				return true
			}
		}
		return false
	}
}

func ofWidth(b string, w int) func(string) bool {
	return func(op string) bool { return base(op) == b && width(op) == w }
}

// Classes are the columns of the instruction mix, in report order.
var Classes = []Class{
	{"HMMA", "tensor-core float products (mma.sync f16/bf16/tf32)", isBase("HMMA")},
	{"IMMA", "tensor-core integer products (mma.sync s8/u8/s4)", isBase("IMMA")},
	{"GMMA", "Hopper warpgroup tensor-core products (wgmma)", isBase("HGMMA", "IGMMA", "QGMMA", "BGMMA")},
	{"LDGSTS", "cp.async: global to shared without registers", isBase("LDGSTS")},
	{"LDSM", "ldmatrix: shared-memory fragments for mma", isBase("LDSM")},
	{"LDG8", "8-bit global loads", ofWidth("LDG", 8)},
	{"LDG16", "16-bit global loads", ofWidth("LDG", 16)},
	{"LDG32", "32-bit global loads", ofWidth("LDG", 32)},
	{"LDG64", "64-bit global loads", ofWidth("LDG", 64)},
	{"LDG128", "128-bit global loads", ofWidth("LDG", 128)},
	{"STG", "global stores", isBase("STG")},
	{"LDS", "shared-memory loads", isBase("LDS")},
	{"STS", "shared-memory stores", isBase("STS")},
	{"LDL/STL", "local-memory accesses (spills, indexed arrays)", isBase("LDL", "STL")},
	{"IDP.4A", "4-way int8 dot products (dp4a)", func(op string) bool { return base(op) == "IDP" && hasMod(op, "4A") }},
	{"FFMA", "fp32 fused multiply-adds", isBase("FFMA")},
	{"HFMA2", "paired fp16 fused multiply-adds", isBase("HFMA2")},
	{"SHFL", "warp shuffles", isBase("SHFL")},
	{"BAR", "block barriers (__syncthreads)", isBase("BAR")},
	{"ATOM", "global and shared atomics and reductions", isBase("ATOM", "ATOMS", "ATOMG", "RED")},
}

// Mix returns the counts of each class of Classes, by name.
func (s SASS) Mix() map[string]int {
	out := map[string]int{}
	for op, n := range s.Opcodes {
		for _, c := range Classes {
			if c.match(op) {
				out[c.Name] += n
			}
		}
	}
	return out
}

// SortedOpcodes returns the opcodes by count, most frequent first.
func (s SASS) SortedOpcodes() []string {
	ops := make([]string, 0, len(s.Opcodes))
	for op := range s.Opcodes {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool {
		if s.Opcodes[ops[i]] != s.Opcodes[ops[j]] {
			return s.Opcodes[ops[i]] > s.Opcodes[ops[j]]
		}
		return ops[i] < ops[j]
	})
	return ops
}
