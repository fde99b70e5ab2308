package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kernbench/kernbench/bench"
	"github.com/kernbench/kernbench/internal/cli"
)

const rooflineHelp = `Usage: opbench roofline [flags]

Measures this machine's ceilings, per thread count:

  f32-fma   peak float32 FMA throughput (GFLOP/s, a multiply-add is 2):
            a pure-Go loop of 12 independent a*x+b chains (what Go code
            reaches: scalar, and fused only when built with GOAMD64=v3),
            and, where the CPU has AVX2 and FMA, an assembly loop of 12
            independent VFMADD231PS on 8 lanes, and where it has AVX-512
            the same on 16 lanes (a core with 256-bit FMA units, such as
            Zen 4, runs both at one rate; a full-width one doubles it);
  int8-dot  the integer dot product of ggml's quantized kernels on AVX2
            (VPMADDUBSW, VPMADDWD, VPADDD) and, with AVX512_VNNI, the vnni
            tier's VPDPBUSD on zmm (GOP/s, a byte product and its sum
            count 2);
  bf16-dot  with AVX512_BF16, the vnni tier's bf16 pair dot product
            VDPBF16PS on zmm (GFLOP/s, a product and its sum count 2),
            the ceiling bf16 matrix products are judged against;
  read      streaming read bandwidth (GB/s), each thread reading a buffer
            of its own: "cache" is half the L2 per thread, "l3" a slice of
            a buffer of half the L3 (points larger than the L2s and
            within the L3 are judged by it), "dram" a slice of a buffer
            of at least 8x the L3 (256 MiB or more), the last two on
            transparent huge pages where the kernel gives them (as the
            repacked weights are); pure-Go uint64 loads, AVX2 32-byte
            loads and AVX-512 64-byte loads.

Prints a table and the roofline each thread count gives (the best kernel
of each kind), and writes DIR/roofline.json, which opbench sweep puts in
its records (so every point can say what share of the roofline it
reaches: matrix products with quantized weights against int8-dot, bf16
ones against bf16-dot, the rest against f32-fma or the bandwidth) and
opbench plot draws. The machine is measured as it is: on a
shared or loaded machine the numbers are low and noisy.

Flags:
`

const rooflineExamples = `
Examples:

	opbench roofline
	opbench roofline -t 1,2 -time 500ms
	opbench roofline -out "" -json -
	opbench roofline -dram-bytes 1G -cache-bytes 64K
`

// defaultOut stands for results/<machine-id> in -out flags.
const defaultOut = "results/<machine-id>"

// rooflineFile is the file name of a saved roofline in a results folder.
const rooflineFile = "roofline.json"

// RooflineSchema names the format of roofline.json.
const rooflineSchema = "kernbench-roofline/v1"

// savedRoofline is roofline.json: a roofline with its machine and
// provenance.
type savedRoofline struct {
	Schema  string        `json:"schema"`
	Machine bench.Machine `json:"machine"`
	bench.Provenance
	Roofline bench.Roofline `json:"roofline"`
}

func rooflineFileOf(m bench.Machine, r bench.Roofline, command string) savedRoofline {
	return savedRoofline{Schema: rooflineSchema, Machine: m, Provenance: bench.DetectProvenance(command), Roofline: r}
}

func readRooflineFile(path string) (savedRoofline, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return savedRoofline{}, err
	}
	var s savedRoofline
	if err := json.Unmarshal(b, &s); err != nil {
		return savedRoofline{}, fmt.Errorf("%s: not a roofline file: %w", path, err)
	}
	if s.Schema != rooflineSchema {
		return savedRoofline{}, fmt.Errorf("%s: schema %q, want %q", path, s.Schema, rooflineSchema)
	}
	if len(s.Roofline.Peaks) == 0 {
		return savedRoofline{}, fmt.Errorf("%s: no peaks", path)
	}
	return s, nil
}

func writeRooflineFile(path string, s savedRoofline) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return cli.WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

type rooflineConfig struct {
	opts     bench.RooflineOptions
	out      string // defaultOut for results/<machine-id>, "" for none
	json     string
	warnings []string // deprecated spellings used
}

// rooflineFlags holds roofline's raw flag values.
type rooflineFlags struct {
	threads                    []int
	cache, l3, dram, out, json string
	time                       time.Duration
}

func newRooflineFlagSet() (*flag.FlagSet, *rooflineFlags) {
	fs := newFlagSet("roofline")
	f := &rooflineFlags{}
	cli.ThreadListVar(fs, &f.threads, fmt.Sprintf("1,%d", runtime.NumCPU()))
	cli.Deprecated(fs, "threads", "t")
	fs.DurationVar(&f.time, "time", 250*time.Millisecond, "time spent on each kernel at each thread count")
	fs.StringVar(&f.cache, "cache-bytes", "", "in-cache read `buffer` per thread, such as 256K (default half the L2)")
	fs.StringVar(&f.l3, "l3-bytes", "", "last-level cache read `buffer` for all threads, such as 16M (default half the L3; 0 skips the level)")
	fs.StringVar(&f.dram, "dram-bytes", "", "DRAM read `buffer` for all threads, such as 1G (default 8x the L3, at least 256M)")
	fs.StringVar(&f.out, "out", defaultOut, "`directory` to write roofline.json to (\"\" for none)")
	fs.StringVar(&f.json, "json", "", "also write the roofline as JSON to `file` (- for stdout, instead of the table)")
	return fs, f
}

func parseRoofline(args []string) (cfg rooflineConfig, help bool, err error) {
	fs, f := newRooflineFlagSet()
	pos, help, err := parseArgs(fs, args)
	if help || err != nil {
		return cfg, help, flagErr(err)
	}
	if len(pos) > 0 {
		return cfg, false, fmt.Errorf("unexpected argument %q", pos[0])
	}
	cfg.opts.Threads = f.threads
	if f.time <= 0 {
		return cfg, false, fmt.Errorf("-time: %v is not a positive duration", f.time)
	}
	cfg.opts.Time = f.time
	if f.cache != "" {
		if cfg.opts.CacheBytes, err = parseBytes(f.cache); err != nil || cfg.opts.CacheBytes < 4096 || cfg.opts.CacheBytes > 1<<30 {
			return cfg, false, fmt.Errorf("-cache-bytes: %q: want 4K to 1G", f.cache)
		}
	}
	if f.l3 == "0" {
		cfg.opts.L3Bytes = -1
	} else if f.l3 != "" {
		if cfg.opts.L3Bytes, err = parseBytes(f.l3); err != nil || cfg.opts.L3Bytes < 1<<20 || cfg.opts.L3Bytes > 1<<30 {
			return cfg, false, fmt.Errorf("-l3-bytes: %q: want 0, or 1M to 1G", f.l3)
		}
	}
	if f.dram != "" {
		if cfg.opts.DRAMBytes, err = parseBytes(f.dram); err != nil || cfg.opts.DRAMBytes < 1<<20 || cfg.opts.DRAMBytes > 64<<30 {
			return cfg, false, fmt.Errorf("-dram-bytes: %q: want 1M to 64G", f.dram)
		}
	}
	cfg.out, cfg.json = f.out, f.json
	if cfg.json != "" && cfg.json != "-" {
		if err := cli.CheckOutputs(nil, cli.Output{Flag: "json", Path: cfg.json}); err != nil {
			return cfg, false, err
		}
	}
	if cfg.out != "" && cfg.out != defaultOut {
		if err := cli.CheckFolder("out", cfg.out); err != nil {
			return cfg, false, err
		}
	}
	cfg.warnings = cli.Warnings(fs)
	return cfg, false, nil
}

func rooflineUsage(w io.Writer) {
	fmt.Fprint(w, rooflineHelp)
	fs, _ := newRooflineFlagSet()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, rooflineExamples)
}

// runRoofline is "opbench roofline".
func runRoofline(args []string, stdout, stderr io.Writer) int {
	cfg, help, err := parseRoofline(args)
	if help {
		rooflineUsage(stdout)
		return exitOK
	}
	if err != nil {
		return usageError(stderr, "roofline", err)
	}
	warn(stderr, "roofline", cfg.warnings)
	m := bench.DetectMachine()
	r, err := bench.MeasureRoofline(m, cfg.opts)
	if err != nil {
		fmt.Fprintf(stderr, "opbench roofline: %v\n", err)
		return exitFailure
	}
	saved := rooflineFileOf(m, r, "opbench roofline "+strings.Join(args, " "))
	if cfg.json != "-" {
		fmt.Fprintf(stdout, "%s (%s)\n", m.String(), m.ID)
		if err := writeRooflineTable(stdout, r); err != nil {
			fmt.Fprintf(stderr, "opbench roofline: %v\n", err)
			return exitFailure
		}
	}
	if cfg.json != "" {
		b, err := json.MarshalIndent(saved, "", "  ")
		if err == nil {
			b = append(b, '\n')
			if cfg.json == "-" {
				_, err = stdout.Write(b)
			} else {
				err = cli.WriteAtomic(cfg.json, func(w io.Writer) error { _, err := w.Write(b); return err })
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "opbench roofline: -json: %v\n", err)
			return exitFailure
		}
	}
	out := cfg.out
	if out == defaultOut {
		out = filepath.Join("results", m.ID)
	}
	if out != "" {
		path := filepath.Join(out, rooflineFile)
		if err := writeRooflineFile(path, saved); err != nil {
			fmt.Fprintf(stderr, "opbench roofline: %v\n", err)
			return exitFailure
		}
		if cfg.json != "-" {
			fmt.Fprintf(stdout, "wrote %s\n", path)
		}
	}
	return exitOK
}

// writeRooflineTable prints every peak, then a line per thread count with
// the roofline it gives.
func writeRooflineTable(w io.Writer, r bench.Roofline) error {
	var rows [][]string
	for _, p := range r.Peaks {
		level := p.Level
		if p.BufferBytes > 0 {
			level += " " + humanSize(p.BufferBytes)
		}
		rows = append(rows, []string{fmt.Sprint(p.Threads), p.Kind, level, p.Kernel,
			fmt.Sprintf("%.1f", p.Best), fmt.Sprintf("%.1f", p.Median), p.Unit})
	}
	if err := renderTable(w, []string{"threads", "kind", "level", "kernel", "best", "median", "unit"}, rows); err != nil {
		return err
	}
	for _, t := range r.Threads() {
		c, ok := r.Compute(t)
		if !ok {
			return errors.New("roofline without an f32 peak")
		}
		line := fmt.Sprintf("%d thread(s): peak %.1f GFLOP/s f32 FMA", t, c.Best)
		if i8, ok := r.Int8(t); ok {
			line += fmt.Sprintf(", %.1f GOP/s int8 dot", i8.Best)
		}
		if b16, ok := r.BF16(t); ok {
			line += fmt.Sprintf(", %.1f GFLOP/s bf16 dot", b16.Best)
		}
		for _, lvl := range []string{bench.LevelCache, bench.LevelL3, bench.LevelDRAM} {
			if bw, ok := r.Bandwidth(t, lvl); ok {
				line += fmt.Sprintf(", read %.1f GB/s %s (ridge %.1f FLOP/B)", bw.Best, lvl, bench.Ridge(c, bw))
			}
		}
		fmt.Fprintln(w, line)
	}
	return nil
}

// humanSize formats a byte count with a binary unit.
func humanSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dG", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%.0fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0fK", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}
