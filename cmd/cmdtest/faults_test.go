package cmdtest

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/bench"
	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/internal/shareddata"
	"github.com/kernbench/kernbench/internal/testmodel"
)

// rewriteKeys copies the GGUF file src to dst with the metadata in set
// replacing (or adding to) src's.
func rewriteKeys(t *testing.T, src, dst string, set map[string]any) {
	t.Helper()
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := gguf.NewWriter()
	for _, kv := range f.KV {
		if _, ok := set[kv.Key]; ok {
			continue
		}
		if err := w.Add(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range set {
		if err := w.Add(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, ti := range f.Tensors {
		data, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensor(ti.Name, ti.Type, ti.Ne[:ti.NDims], data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteFile(dst); err != nil {
		t.Fatal(err)
	}
}

// TestQuantizeRefusesWhatRunRefuses: quantize checks a model's
// architecture and settings as the runner does, before it writes
// anything (it used to write, exit 0, files run then refused).
func TestQuantizeRefusesWhatRunRefuses(t *testing.T) {
	commands(t)
	vocab := shareddata.Path(t, "stories260K.gguf")
	dir := t.TempDir()
	good := map[string]string{}
	for _, arch := range append([]string{"falcon9"}, testmodel.Archs...) {
		p := filepath.Join(dir, "good-"+arch+".gguf")
		if err := testmodel.Write(p, arch, vocab); err != nil {
			t.Fatal(err)
		}
		good[arch] = p
	}
	u := func(v uint32) any { return v }
	cases := []struct {
		name, arch string
		set        map[string]any
		want       string
	}{
		{"unknown architecture", "falcon9", nil, `"falcon9"`},
		{"no experts", "gpt-oss", map[string]any{"gpt-oss.expert_count": u(0)}, "expert_count"},
		{"1000 experts", "gpt-oss", map[string]any{"gpt-oss.expert_count": u(1000)}, "expert_count"},
		{"llama with 1000 experts", "mixtral", map[string]any{"llama.expert_count": u(1000)}, "expert_count"},
		{"llama experts declared 0", "mixtral", map[string]any{"llama.expert_count": u(0)}, "llama.expert_count = 0"},
		{"more used experts than experts", "gpt-oss", map[string]any{"gpt-oss.expert_used_count": u(5)}, "expert_used_count"},
		{"3 KV heads of 4", "llama", map[string]any{"llama.attention.head_count_kv": u(3)}, "not a multiple of 3 KV heads"},
		{"zero SSM state", "mamba", map[string]any{"mamba.ssm.state_size": u(0)}, "mamba.ssm.state_size = 0"},
		{"zero SSM inner size", "mamba2", map[string]any{"mamba2.ssm.inner_size": u(0)}, "mamba2.ssm.inner_size = 0"},
		{"zero conv kernel", "mamba", map[string]any{"mamba.ssm.conv_kernel": u(0)}, "mamba.ssm.conv_kernel = 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			src := filepath.Join(work, "bad.gguf")
			if c.set == nil {
				b, err := os.ReadFile(good[c.arch])
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(src, b, 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				rewriteKeys(t, good[c.arch], src, c.set)
			}
			// run refuses it, and quantize refuses it the same way.
			rr := run(t, work, "run", "-m", src, "-p", "hi", "-n", "1")
			if rr.code == 0 || !strings.Contains(rr.stderr, c.want) {
				t.Fatalf("run: exit %d, stderr %q; want a refusal naming %q", rr.code, rr.stderr, c.want)
			}
			r := check(t, work, badCase{"quantize", []string{src, "out.gguf", "q8_0"}, 1, []string{"bad.gguf", c.want}})
			if strings.Contains(r.stdout, "->") {
				t.Errorf("quantize began work before refusing:\n%s", r.stdout)
			}
		})
	}
	// The good models still quantize.
	for _, arch := range testmodel.Archs {
		if r := run(t, dir, "quantize", good[arch], filepath.Join(dir, arch+"-q8_0.gguf"), "q8_0"); r.code != 0 {
			t.Errorf("%s: exit %d\n%s", arch, r.code, r.stderr)
		}
	}
}

// TestCompareAndPlotCheckRecords: compare and plot judge records by their
// samples, never take an emulator's times for a device's, and refuse
// malformed records with a message naming them.
func TestCompareAndPlotCheckRecords(t *testing.T) {
	dir := fixture(t)
	good, err := bench.ReadFile(filepath.Join(dir, "good.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(good.Records) != 1 || !good.Records[0].Timed() {
		t.Fatalf("the fixture's sweep gave %d records", len(good.Records))
	}
	write := func(name string, edit func(s *bench.Set)) {
		s := *good
		s.Records = []bench.Record{good.Records[0]}
		r := &s.Records[0]
		r.Samples = slices.Clone(r.Samples)
		r.Dims = maps.Clone(r.Dims)
		edit(&s)
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := s.WriteJSON(f); err != nil {
			t.Fatal(err)
		}
	}
	// 14.22 us stored beside samples of another time.
	write("lying.json", func(s *bench.Set) { s.Records[0].Median *= 14.22 })
	// A cuda-emu record without its emulated mark.
	write("emu.json", func(s *bench.Set) { s.Records[0].Backend = "cuda-emu"; s.Records[0].Emulated = false })
	write("dup.json", func(s *bench.Set) { s.Records = append(s.Records, s.Records[0]) })
	write("nodims.json", func(s *bench.Set) { s.Records[0].Dims = nil })
	name := "op=RMS_NORM type=f32 shape=k=256,n=1 backend="

	for _, c := range []badCase{
		{"opbench", []string{"compare", "good.json", "lying.json"}, 2, []string{"lying.json", name, "stored median", "disagrees with its"}},
		{"opbench", []string{"plot", "-out", ".", "lying.json"}, 2, []string{"lying.json", name, "stored median"}},
		{"opbench", []string{"plot", "-out", ".", "emu.json"}, 2, []string{"cuda-emu", "ran on an emulator"}},
		{"opbench", []string{"compare", "good.json", "dup.json"}, 2, []string{"two records for"}},
		{"opbench", []string{"plot", "-out", ".", "dup.json"}, 2, []string{"dup.json", "records 1 and 2 are both " + name}},
		{"opbench", []string{"plot", "-out", ".", "nodims.json"}, 2, []string{"nodims.json", "record 1 (RMS_NORM f32 k=256,n=1 on", "no dims"}},
	} {
		r := check(t, dir, c)
		if strings.Contains(r.stderr, "log scale") {
			t.Errorf("%v: gonum's message leaks: %s", c.args, r.stderr)
		}
	}
	// An unmarked emulated record is compared without a verdict, and left
	// out of the geometric mean.
	r := run(t, dir, "opbench", "compare", "good.json", "emu.json")
	if r.code != 0 || !strings.Contains(r.stdout, "emulated, no verdict") || !strings.Contains(r.stdout, "over 0 points") ||
		strings.Contains(r.stdout, "within noise |") || strings.Contains(r.stdout, "faster |") {
		t.Errorf("compare with an unmarked cuda-emu record: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
