package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/bench"
)

// mergeSweepArgs is a small, quick sweep of six points.
var mergeSweepArgs = []string{"sweep", "-op", "rms_norm,rope", "-n", "1,2,3", "-t", "1", "-time", "5ms", "-min-samples", "3", "-roofline", "off"}

// runShard runs mergeSweepArgs (plus extra) into dir as NAME.json, failing
// the test on a non-zero exit.
func runShard(t *testing.T, dir, name string, extra ...string) string {
	t.Helper()
	args := append(slices.Clone(mergeSweepArgs), "-out", dir, "-name", name)
	code, out, errOut := runArgs(append(args, extra...)...)
	if code != exitOK {
		t.Fatalf("%v: code %d\n%s\n%s", extra, code, out, errOut)
	}
	return filepath.Join(dir, name+".json")
}

func readSet(t *testing.T, path string) *bench.Set {
	t.Helper()
	s, err := bench.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func writeSetFile(t *testing.T, s *bench.Set, path string) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := s.WriteJSON(f); err != nil {
		t.Fatal(err)
	}
	return path
}

// recordKeys lists a set's record keys, sorted.
func recordKeys(s *bench.Set) []string {
	var out []string
	for _, r := range s.Records {
		out = append(out, r.Key())
	}
	slices.Sort(out)
	return out
}

// onMachine returns a copy of s that says it ran on machine id.
func onMachine(s *bench.Set, id string) *bench.Set {
	c := *s
	c.Machine = bench.Machine{ID: id, CPU: "Other CPU", OS: s.Machine.OS, Arch: s.Machine.Arch}
	return &c
}

// TestMergeShards: a sweep's three shards, given in any order, merge
// into a set with exactly the unsharded sweep's points, in its place by
// machine; the shards of two machines merge into one set each.
func TestMergeShards(t *testing.T) {
	withEnv(t, nil)
	dir := t.TempDir()
	whole := readSet(t, runShard(t, dir, "whole"))
	var shards []string
	for i := 0; i < 3; i++ {
		shards = append(shards, runShard(t, dir, "s"+strconv.Itoa(i), "-shard", shardArg(i, 3)))
	}
	first := readSet(t, shards[0])
	if first.Sweep == nil || first.Sweep.Shards != 3 || first.Sweep.Shard != 0 || len(first.Sweep.Points) != 6 {
		t.Fatalf("shard 0's sweep record: %+v", first.Sweep)
	}
	for _, r := range first.Records {
		found := false
		for _, p := range first.Sweep.Points {
			found = found || (p.Point == r.Point() && p.Shard == 0)
		}
		if !found {
			t.Errorf("shard 0 holds %s, which its split puts elsewhere", r.Point())
		}
	}

	out := filepath.Join(dir, "merged")
	code, stdout, errOut := runArgs("merge", out, shards[2], shards[0], shards[1])
	if code != exitOK {
		t.Fatalf("merge: code %d\n%s\n%s", code, stdout, errOut)
	}
	merged := readSet(t, filepath.Join(out, whole.Machine.Kind(), first.Sweep.ID+".json"))
	if got, want := recordKeys(merged), recordKeys(whole); !slices.Equal(got, want) {
		t.Errorf("merged points\n%v\nunsharded\n%v", got, want)
	}
	if merged.Sweep == nil || !merged.Sweep.Merged || merged.Sweep.ID != first.Sweep.ID {
		t.Errorf("merged sweep record %+v", merged.Sweep)
	}
	// In the sweep's order.
	for i := 1; i < len(merged.Records); i++ {
		if pointIndex(merged.Sweep, merged.Records[i].Point()) < pointIndex(merged.Sweep, merged.Records[i-1].Point()) {
			t.Errorf("merged records out of the sweep's order at %d", i)
		}
	}
	if !strings.Contains(stdout, "merged 3 shards of "+first.Sweep.ID) {
		t.Errorf("merge output: %s", stdout)
	}
	// A merged set is not a shard.
	if code, _, errOut := runArgs("merge", t.TempDir(), filepath.Join(out, whole.Machine.Kind(), first.Sweep.ID+".json")); code != exitUsage || !strings.Contains(errOut, "already a merge") {
		t.Errorf("merging a merge: code %d, %s", code, errOut)
	}

	// Two machines' shards: one set each, under each machine's folder.
	var all []string
	for i, p := range shards {
		all = append(all, p, writeSetFile(t, onMachine(readSet(t, p), "other-cpu-4c"), filepath.Join(dir, "other"+strconv.Itoa(i)+".json")))
	}
	out2 := filepath.Join(dir, "fleet")
	if code, stdout, errOut := runArgs("merge", "-name", "fleet", out2, all[0], all[1], all[2], all[3], all[4], all[5]); code != exitOK {
		t.Fatalf("fleet merge: code %d\n%s\n%s", code, stdout, errOut)
	}
	for _, m := range []string{whole.Machine.Kind(), "other-cpu-4c"} {
		s := readSet(t, filepath.Join(out2, m, "fleet.json"))
		if s.Machine.Kind() != m || !slices.Equal(recordKeys(s), recordKeys(whole)) {
			t.Errorf("%s: machine %s, points %v", m, s.Machine.Kind(), recordKeys(s))
		}
	}
	// A sweep's shards split between machines: each machine lacks some.
	code, _, errOut = runArgs("merge", filepath.Join(dir, "split"), all[0], all[2], all[5])
	if code != exitFailure || !strings.Contains(errOut, "shard 2/3 of "+first.Sweep.ID+" on machine "+whole.Machine.Kind()+" is missing") ||
		!strings.Contains(errOut, "shard 0/3 of "+first.Sweep.ID+" on machine other-cpu-4c is missing") {
		t.Errorf("shards split between machines: code %d\n%s", code, errOut)
	}
}

func pointIndex(sw *bench.SweepShard, point string) int {
	for i, p := range sw.Points {
		if p.Point == point {
			return i
		}
	}
	return -1
}

// TestMergeRefuses: a missing shard, shards of different sweeps, one
// shard twice, duplicated points and sets that are not shards are refused
// with the files, shards and points named, and nothing is written.
func TestMergeRefuses(t *testing.T) {
	withEnv(t, nil)
	dir := t.TempDir()
	var s []string
	for i := 0; i < 3; i++ {
		s = append(s, runShard(t, dir, "s"+strconv.Itoa(i), "-shard", shardArg(i, 3)))
	}
	sw := readSet(t, s[0]).Sweep
	other := runShard(t, dir, "other1", "-shard", "1/3", "-min-samples", "4")
	otherID := readSet(t, other).Sweep.ID
	whole := runShard(t, dir, "whole")

	// s0 with one record twice; s1 with one of s0's records.
	s0 := readSet(t, s[0])
	s0.Records = append(s0.Records, s0.Records[0])
	dupIn := writeSetFile(t, s0, filepath.Join(dir, "dup0.json"))
	s1 := readSet(t, s[1])
	stolen := readSet(t, s[0]).Records[0]
	s1.Records = append(s1.Records, stolen)
	dupAcross := writeSetFile(t, s1, filepath.Join(dir, "dup1.json"))
	// s2 interrupted: its last record gone.
	s2 := readSet(t, s[2])
	lost := s2.Records[len(s2.Records)-1]
	s2.Records = s2.Records[:len(s2.Records)-1]
	short := writeSetFile(t, s2, filepath.Join(dir, "short2.json"))

	var missing []string
	for _, p := range sw.Points {
		if p.Shard == 2 {
			missing = append(missing, p.Point)
		}
	}
	for _, tc := range []struct {
		name  string
		files []string
		code  int
		want  []string
	}{
		{"missing shard", []string{s[0], s[1]}, exitFailure, []string{"shard 2/3 of " + sw.ID, "is missing: its " + strconv.Itoa(len(missing)) + " point(s) " + strings.Join(missing, ", ")}},
		{"different sweeps", []string{s[0], other, s[2]}, exitFailure, []string{s[0] + " is shard 0/3 of sweep " + sw.ID + ", but " + other + " is shard 1/3 of sweep " + otherID, "shards of different sweeps"}},
		{"shard twice", []string{s[0], s[1], s[2], s[1]}, exitFailure, []string{s[1] + " and " + s[1] + " are both shard 1/3 of " + sw.ID}},
		{"point twice in a file", []string{dupIn, s[1], s[2]}, exitFailure, []string{"duplicated point " + s0.Records[0].Key() + ": in " + dupIn + " twice"}},
		{"point in two files", []string{s[0], dupAcross, s[2]}, exitFailure, []string{"duplicated point " + stolen.Key() + ": in both " + s[0] + " and " + dupAcross, dupAcross + ": record " + stolen.Key() + " belongs to shard 0/3"}},
		{"interrupted shard", []string{s[0], s[1], short}, exitFailure, []string{short + " (shard 2/3 of " + sw.ID + ") lacks 1 of its points (interrupted?): " + lost.Point()}},
		{"not a shard", []string{s[0], whole}, exitUsage, []string{whole + " is not a shard of a sweep"}},
		{"csv", []string{strings.TrimSuffix(s[0], ".json") + ".csv"}, exitUsage, []string{"is not a shard of a sweep"}},
		{"no inputs", nil, exitUsage, []string{"want OUT and at least one"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, _, errOut := runArgs(append([]string{"merge", out}, tc.files...)...)
			if code != tc.code {
				t.Errorf("code %d, want %d\n%s", code, tc.code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a refused merge made %s", out)
			}
		})
	}
}

// TestMergeProfiles: opbench profile shards merge into one
// NAME.profile.json with every point, and a missing one is named.
func TestMergeProfiles(t *testing.T) {
	dir := t.TempDir()
	sw := &bench.SweepShard{ID: "profile-0123456789ab", Shards: 2, Points: []bench.ShardPoint{
		{Point: "RMS_NORM/f32/k=4096,n=1", Shard: 1, Cost: 1}, {Point: "ROPE/f32/d=128,heads=32,n=1", Shard: 0, Cost: 1},
	}}
	var files []string
	for i, p := range []profilePoint{{Op: "ROPE", Type: "f32", Shape: "d=128,heads=32,n=1", Backend: "cuda-emu"}, {Op: "RMS_NORM", Type: "f32", Shape: "k=4096,n=1", Backend: "cuda-emu"}} {
		s := newProfileSet("opbench profile -shard")
		c := *sw
		c.Shard = i
		s.Sweep = &c
		s.Points = []profilePoint{p}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.Join(dir, "p"+strconv.Itoa(i)+".json"))
		if err := os.WriteFile(files[i], b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out")
	if code, stdout, errOut := runArgs("merge", out, files[1], files[0]); code != exitOK {
		t.Fatalf("code %d\n%s\n%s", code, stdout, errOut)
	}
	merged, ok, err := readProfileSet(filepath.Join(out, sw.ID+".profile.json"))
	if !ok || err != nil || len(merged.Points) != 2 || merged.Points[0].Op != "RMS_NORM" || !merged.Sweep.Merged {
		t.Fatalf("merged profile: %v %v %+v", ok, err, merged)
	}
	if code, _, errOut := runArgs("merge", out, files[0]); code != exitFailure || !strings.Contains(errOut, "shard 1/2 of "+sw.ID+" is missing: its 1 point(s) RMS_NORM/f32/k=4096,n=1") {
		t.Errorf("missing profile shard: code %d, %s", code, errOut)
	}
}

// TestCompareCrossMachine: sets of two machines are compared with their
// speeds shown but labelled cross-machine, with no verdict.
func TestCompareCrossMachine(t *testing.T) {
	withEnv(t, nil)
	dir := t.TempDir()
	a := runShard(t, dir, "a")
	b := writeSetFile(t, onMachine(readSet(t, a), "other-cpu-4c"), filepath.Join(dir, "b.json"))
	code, out, errOut := runArgs("compare", a, b)
	if code != exitOK {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "cross-machine: A ran on") || !strings.Contains(out, "geomean speed B/A 1.000x over 6 points; no verdict") {
		t.Errorf("no cross-machine label:\n%s", out)
	}
	if n := strings.Count(out, "│ cross-machine │"); n != 6 {
		t.Errorf("%d of 6 rows labelled cross-machine:\n%s", n, out)
	}
	for _, v := range []string{"within noise", "│ faster", "│ SLOWER", "too few"} {
		if strings.Contains(out, v) {
			t.Errorf("cross-machine comparison gives a verdict (%q):\n%s", v, out)
		}
	}
	if code, _, errOut := runArgs("compare", "-fail-on-regression", a, b); code != exitUsage || !strings.Contains(errOut, "no verdict to fail on") {
		t.Errorf("-fail-on-regression across machines: code %d, %s", code, errOut)
	}
	// The same machine still gets verdicts.
	if _, out, _ := runArgs("compare", a, a); strings.Contains(out, "cross-machine") || !strings.Contains(out, "within noise") {
		t.Errorf("same machine:\n%s", out)
	}
}

func TestMergeHelp(t *testing.T) {
	code, out, errOut := runArgs("merge", "-h")
	if code != exitOK || errOut != "" || !strings.Contains(out, "Usage: opbench merge") || !strings.Contains(out, "-name") || !strings.Contains(out, "OUT/<machine-id>/NAME.json") {
		t.Errorf("merge -h: code %d, stderr %q\n%s", code, errOut, out)
	}
	if _, out, _ := runArgs("-h"); !strings.Contains(out, "\tmerge ") {
		t.Errorf("opbench -h lacks merge:\n%s", out)
	}
}
