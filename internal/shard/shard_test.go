package shard

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Spec
		wantErr string
	}{
		{"0/3", Spec{0, 3}, ""},
		{"2/3", Spec{2, 3}, ""},
		{" 0/1 ", Spec{0, 1}, ""},
		{"3/3", Spec{}, "not in 0..2"},
		{"-1/3", Spec{}, "not in 0..2"},
		{"0/0", Spec{}, "below 1"},
		{"1/-2", Spec{}, "below 1"},
		{"a/3", Spec{}, `index "a"`},
		{"1/x", Spec{}, `count "x"`},
		{"1", Spec{}, "is not i/n"},
		{"", Spec{}, "is not i/n"},
		{"0/1000001", Spec{}, "above"},
	} {
		got, err := Parse(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Parse(%q) = %v, %v; want error containing %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		count   int
		want    Spec
		wantErr string
	}{
		{"none", nil, 0, Spec{}, ""},
		{"slurm", map[string]string{SlurmID: "1", SlurmCount: "3"}, 0, Spec{1, 3}, ""},
		{"slurm from 1", map[string]string{SlurmID: "3", SlurmCount: "3", SlurmMin: "1"}, 0, Spec{2, 3}, ""},
		{"slurm count flag", map[string]string{SlurmID: "4"}, 5, Spec{4, 5}, ""},
		{"slurm no count", map[string]string{SlurmID: "1"}, 0, Spec{}, SlurmCount + " is not"},
		{"slurm garbage", map[string]string{SlurmID: "one", SlurmCount: "3"}, 0, Spec{}, "not an integer"},
		{"slurm out of range", map[string]string{SlurmID: "3", SlurmCount: "3"}, 0, Spec{}, "not in 0..2"},
		{"k8s", map[string]string{K8sIndex: "2"}, 4, Spec{2, 4}, ""},
		{"k8s wins", map[string]string{K8sIndex: "0", SlurmID: "1", SlurmCount: "3"}, 2, Spec{0, 2}, ""},
		{"k8s no count", map[string]string{K8sIndex: "2"}, 0, Spec{}, "-shard-count"},
		{"k8s out of range", map[string]string{K8sIndex: "4"}, 4, Spec{}, "not in 0..3"},
		{"count without index", nil, 3, Spec{}, "no " + K8sIndex},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, from, err := FromEnv(func(k string) string { return tc.env[k] }, tc.count)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, %v; want error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %v (%s), %v; want %v", got, from, err, tc.want)
			}
			if got.Sharded() && from == "" {
				t.Errorf("no source named for %v", got)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{1, 2, 3, 7} {
		costs := make([]float64, 200)
		for i := range costs {
			costs[i] = 0.5 + rng.ExpFloat64()
		}
		a, err := Split(costs, n)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Split(slices.Clone(costs), n)
		if !slices.Equal(a, b) {
			t.Fatalf("n=%d: two splits of the same costs differ", n)
		}
		loads := Loads(costs, a, n)
		var total, max float64
		for _, l := range loads {
			total += l
			max = maxf(max, l)
		}
		if mean := total / float64(n); max > 1.05*mean {
			t.Errorf("n=%d: loads %v, largest %.2f above 1.05x the mean %.2f", n, loads, max, mean)
		}
		for i, s := range a {
			if s < 0 || s >= n {
				t.Fatalf("item %d in shard %d of %d", i, s, n)
			}
		}
	}
	// Bad costs count as the smallest good one; every item is placed.
	a, err := Split([]float64{0, -1, 2, 2}, 2)
	if err != nil || len(a) != 4 {
		t.Fatal(a, err)
	}
	if _, err := Split([]float64{1}, 0); err == nil {
		t.Error("Split into 0 shards: no error")
	}
}

func maxf(a, b float64) float64 {
	if a > b {
		return a
	}
	return b
}

func TestID(t *testing.T) {
	type def struct {
		Points []string
		Time   string
	}
	base, err := ID("sweep", def{[]string{"a", "b"}, "1s"})
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := ID("sweep", def{[]string{"a", "b"}, "1s"}); again != base {
		t.Errorf("same definition, IDs %s and %s", base, again)
	}
	for _, other := range []struct {
		kind string
		d    def
	}{
		{"ggml", def{[]string{"a", "b"}, "1s"}},
		{"sweep", def{[]string{"b", "a"}, "1s"}},
		{"sweep", def{[]string{"a"}, "1s"}},
		{"sweep", def{[]string{"a", "b"}, "2s"}},
	} {
		id, err := ID(other.kind, other.d)
		if err != nil || id == base {
			t.Errorf("%s %v: ID %s, %v; want one other than %s", other.kind, other.d, id, err, base)
		}
	}
	if !strings.HasPrefix(base, "sweep-") || len(base) != len("sweep-")+12 {
		t.Errorf("ID %q: want sweep- and 12 hex digits", base)
	}
}
