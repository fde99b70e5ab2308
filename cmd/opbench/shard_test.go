package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/bench"
)

// withEnv makes getenv read env for the test.
func withEnv(t *testing.T, env map[string]string) {
	t.Helper()
	saved := getenv
	getenv = func(k string) string { return env[k] }
	t.Cleanup(func() { getenv = saved })
}

// sweepShards parses sweep's args with -shard i/n for each i and returns
// each shard's points and split record.
func sweepShards(t *testing.T, n int, args ...string) (all []bench.PlannedPoint, shards [][]bench.PlannedPoint, infos []*bench.SweepShard) {
	t.Helper()
	for i := 0; i < n; i++ {
		cfg, _, err := parseSweep(append(slices.Clone(args), "-shard", shardArg(i, n)))
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		points, _, err := bench.ExpandAll(cfg.entries)
		if err != nil {
			t.Fatal(err)
		}
		all = points
		mine, info, err := shardSweep(cfg, "sweep", nil, points, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		shards = append(shards, mine)
		infos = append(infos, info)
	}
	return all, shards, infos
}

func shardArg(i, n int) string { return strconv.Itoa(i) + "/" + strconv.Itoa(n) }

// TestShardLlama7bBalanced: the llama-7b preset in 3 shards has no shard
// above 1.15x the mean estimated cost, on the CPU and on the emulated GPU
// (validated, or profiled), with every type; the shards together hold each
// point exactly once, and every shard records the same split.
func TestShardLlama7bBalanced(t *testing.T) {
	withEnv(t, nil)
	for _, args := range [][]string{
		{"-preset", "llama-7b"},
		{"-preset", "llama-7b", "-n", "1,32,512", "-type", "q4_0,q8_0,q4_K,q6_K,f16"},
		{"-preset", "llama-7b", "-backend", "cuda-emu", "-type", "q4_0,q8_0,q4_K,q6_K"},
		{"-preset", "llama-7b", "-backend", "cuda-emu", "-profile"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			all, shards, infos := sweepShards(t, 3, args...)
			count := map[string]int{}
			for _, sh := range shards {
				for _, p := range sh {
					count[p.String()]++
				}
			}
			for _, p := range all {
				if count[p.String()] != 1 {
					t.Errorf("%s is in %d shards", p, count[p.String()])
				}
			}
			if len(count) != len(all) {
				t.Errorf("%d points in the shards, %d in the sweep", len(count), len(all))
			}
			for i, info := range infos {
				if info.Shard != i || info.Shards != 3 || info.ID != infos[0].ID || !slices.Equal(info.Points, infos[0].Points) {
					t.Fatalf("shard %d records %s %d/%d, shard 0 %s: the shards disagree", i, info.ID, info.Shard, info.Shards, infos[0].ID)
				}
			}
			loads := make([]float64, 3)
			var total float64
			for _, p := range infos[0].Points {
				loads[p.Shard] += p.Cost
				total += p.Cost
			}
			mean := total / 3
			for i, l := range loads {
				if l > 1.15*mean {
					t.Errorf("shard %d: estimated %.1fs, above 1.15x the mean %.1fs (loads %v)", i, l, mean, loads)
				}
			}
			t.Logf("%d points, loads %.1f (mean %.1f)", len(all), loads, mean)
		})
	}
}

// TestSweepIDFlags: every flag that changes a point or how it is measured
// changes the sweep ID; the output's place, the charts, the roofline and
// the shard do not.
func TestSweepIDFlags(t *testing.T) {
	withEnv(t, nil)
	base := []string{"-op", "mul_mat,rms_norm", "-type", "q4_0", "-m", "64", "-n", "1,2", "-k", "256", "-t", "1"}
	id := func(args []string) string {
		t.Helper()
		_, _, infos := sweepShards(t, 1, args...)
		return infos[0].ID
	}
	baseID := id(base)
	set := func(flag, value string) []string {
		out := slices.Clone(base)
		for i := 0; i < len(out); i += 2 {
			if out[i] == flag {
				out[i+1] = value
				return out
			}
		}
		return append(out, flag, value)
	}
	for _, tc := range []struct {
		flag, value string
		same        bool
	}{
		{"-op", "mul_mat", false},
		{"-type", "q8_0", false},
		{"-m", "128", false},
		{"-n", "1,2,4", false},
		{"-n", "2,1", false},
		{"-k", "512", false},
		{"-t", "2", false},
		{"-time", "2s", false},
		{"-min-samples", "7", false},
		{"-cost-flops", "1e9", false},
		{"-cost-bytes", "1e9", false},
		{"-ref-budget", "-1", false},
		{"-max-mem", "1G", false},
		{"-backend", "cuda-emu", false},
		{"-out", t.TempDir(), true},
		{"-name", "other", true},
		{"-plot", "true", true},
		{"-roofline", "off", true},
	} {
		args := set(tc.flag, tc.value)
		if tc.flag == "-plot" {
			args = append(slices.Clone(base), "-plot")
		}
		got := id(args)
		if (got == baseID) != tc.same {
			t.Errorf("%s %s: ID %s, base %s; same wanted: %v", tc.flag, tc.value, got, baseID, tc.same)
		}
	}
	// Another shard of the same sweep has the same ID.
	_, _, infos := sweepShards(t, 2, base...)
	if infos[0].ID != infos[1].ID || infos[0].ID != baseID {
		t.Errorf("shards 0/2 and 1/2: IDs %s and %s, base %s", infos[0].ID, infos[1].ID, baseID)
	}
}

// TestShardFlags: -shard and the job-array environment, and the errors
// for bad values.
func TestShardFlags(t *testing.T) {
	base := []string{"sweep", "-op", "rms_norm", "-n", "1,2,4,8", "-list"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string // in stderr
	}{
		{"flag", nil, []string{"-shard", "1/3"}, exitOK, "shard 1/3 of sweep-"},
		{"slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "3"}, nil, exitOK, "shard 2/3 (from SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT)"},
		{"flag over slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "3"}, []string{"-shard", "0/2"}, exitOK, "shard 0/2 of"},
		{"kubernetes", map[string]string{"JOB_COMPLETION_INDEX": "1"}, []string{"-shard-count", "2"}, exitOK, "shard 1/2 (from JOB_COMPLETION_INDEX)"},
		{"kubernetes no count", map[string]string{"JOB_COMPLETION_INDEX": "1"}, nil, exitUsage, "give the shard count (the Job's completions) with -shard-count"},
		{"index too big", nil, []string{"-shard", "3/3"}, exitUsage, `-shard: "3/3": shard index 3 is not in 0..2`},
		{"no shards", nil, []string{"-shard", "0/0"}, exitUsage, "shard count 0 is below 1"},
		{"garbage", nil, []string{"-shard", "one/3"}, exitUsage, `shard index "one" is not an integer`},
		{"no slash", nil, []string{"-shard", "2"}, exitUsage, "is not i/n"},
		{"slurm garbage", map[string]string{"SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_COUNT": "3"}, nil, exitUsage, `SLURM_ARRAY_TASK_ID="x" is not an integer`},
		{"both", nil, []string{"-shard", "0/2", "-shard-count", "2"}, exitUsage, "give one or the other"},
		{"negative count", nil, []string{"-shard-count", "-1"}, exitUsage, "-shard-count: -1 is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withEnv(t, tc.env)
			code, _, errOut := runArgs(append(slices.Clone(base), tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("code %d, stderr %q; want %d and %q", code, errOut, tc.code, tc.want)
			}
		})
	}
	// Every command takes -shard.
	withEnv(t, nil)
	for _, args := range [][]string{
		{"validate", "-op", "rope", "-list", "-shard", "5/5"},
		{"profile", "-op", "rms_norm", "-shard", "5/5"},
		{"ggml", "-op", "rms_norm", "-list", "-shard", "5/5"},
	} {
		code, _, errOut := runArgs(args...)
		if code != exitUsage || !strings.Contains(errOut, "-shard: \"5/5\": shard index 5 is not in 0..4") {
			t.Errorf("%v: code %d, stderr %q", args, code, errOut)
		}
	}
}

// TestValidateShards: validate's shards hold every case once between
// them, and each says which shard of which run it is.
func TestValidateShards(t *testing.T) {
	withEnv(t, nil)
	whole, out, _ := runArgs("validate", "-op", "rope,soft_max", "-list")
	if whole != exitOK {
		t.Fatal(out)
	}
	want := caseCount(t, out)
	var got int
	var ids []string
	for i := 0; i < 3; i++ {
		code, out, errOut := runArgs("validate", "-op", "rope,soft_max", "-list", "-shard", shardArg(i, 3))
		if code != exitOK {
			t.Fatalf("shard %d: %d %s", i, code, errOut)
		}
		got += caseCount(t, out)
		_, id, _ := strings.Cut(errOut, " of validate-")
		ids = append(ids, strings.Fields(id)[0])
	}
	if got != want {
		t.Errorf("shards list %d cases, the whole run %d", got, want)
	}
	if ids[0] != ids[1] || ids[1] != ids[2] {
		t.Errorf("validate shards of one run have IDs %v", ids)
	}
}

// caseCount reads validate -list's "N cases" line.
func caseCount(t *testing.T, out string) int {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var n int
	for _, c := range strings.TrimSuffix(lines[len(lines)-1], " cases") {
		if c < '0' || c > '9' {
			t.Fatalf("last line %q", lines[len(lines)-1])
		}
		n = 10*n + int(c-'0')
	}
	return n
}

// TestShardOtherCommands: ggml and profile split their points as sweep
// does, into shards that hold each point once, and validate -json of a
// shard says which shard of which run it is.
func TestShardOtherCommands(t *testing.T) {
	withEnv(t, nil)
	// ggml: the shard line names a ggml sweep; -list lists its points.
	total := 0
	for i := 0; i < 2; i++ {
		code, out, errOut := runArgs("ggml", "-op", "rms_norm,rope", "-n", "1,2,4", "-list", "-shard", shardArg(i, 2))
		if code != exitOK || !strings.Contains(errOut, "opbench ggml: shard "+shardArg(i, 2)+" of ggml-") {
			t.Fatalf("ggml shard %d: code %d, %s", i, code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		var n int
		if _, err := fmt.Sscanf(lines[len(lines)-1], "%d points", &n); err != nil {
			t.Fatalf("ggml -list: last line %q", lines[len(lines)-1])
		}
		total += n
	}
	if total != 6 {
		t.Errorf("ggml's two shards list %d points, want 6", total)
	}

	// profile: every point in exactly one shard.
	count := map[string]int{}
	var all []bench.PlannedPoint
	for i := 0; i < 3; i++ {
		cfg, _, err := parseProfile([]string{"-backend", "cuda-emu", "-preset", "llama-7b", "-shard", shardArg(i, 3)})
		if err != nil {
			t.Fatal(err)
		}
		points, _, err := bench.ExpandAll(cfg.entries)
		if err != nil {
			t.Fatal(err)
		}
		all = points
		mine, info, err := shardProfile(cfg, points, io.Discard)
		if err != nil || info == nil || !strings.HasPrefix(info.ID, "profile-") || info.Shard != i {
			t.Fatalf("profile shard %d: %+v, %v", i, info, err)
		}
		for _, p := range mine {
			count[p.String()]++
		}
	}
	for _, p := range all {
		if count[p.String()] != 1 {
			t.Errorf("profile: %s in %d shards", p, count[p.String()])
		}
	}

	// validate -json of a shard.
	path := t.TempDir() + "/v.json"
	code, _, errOut := runArgs("validate", "-op", "rope", "-tier", "generic", "-t", "1", "-shard", "1/4", "-json", path)
	if code != exitOK {
		t.Fatalf("validate shard: code %d, %s", code, errOut)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got shardedResults
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("validate -json of a shard: %v\n%s", err, b)
	}
	if got.Sweep == nil || got.Sweep.Shard != 1 || got.Sweep.Shards != 4 || !strings.HasPrefix(got.Sweep.ID, "validate-") {
		t.Fatalf("validate shard record: %+v", got.Sweep)
	}
	want := 0
	for _, p := range got.Sweep.Points {
		if p.Shard == 1 {
			want++
		}
	}
	if want == 0 || len(got.Results) != want {
		t.Errorf("validate shard 1/4: %d results, its split lists %d cases", len(got.Results), want)
	}
}
