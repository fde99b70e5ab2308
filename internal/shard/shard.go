// Package shard splits a list of work items into n shards balanced by
// estimated cost, the same way on every machine, and reads which shard a
// process is from its command line or from a job array's environment
// (Slurm's SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT, Kubernetes'
// JOB_COMPLETION_INDEX).
package shard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// A Spec names shard Index of Count (0 <= Index < Count). The zero Spec
// means "not sharded".
type Spec struct {
	Index, Count int
}

// Sharded reports whether s names a shard at all.
func (s Spec) Sharded() bool { return s.Count > 0 }

// String is "i/n", the form Parse reads.
func (s Spec) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// maxCount bounds the shard count: far more than any job array.
const maxCount = 100000

// Parse reads "i/n" (shard i of n, i counted from 0 as job arrays count).
func Parse(s string) (Spec, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Spec{}, fmt.Errorf("%q is not i/n (shard i of n, i from 0 to n-1)", s)
	}
	i, err := strconv.Atoi(a)
	if err != nil {
		return Spec{}, fmt.Errorf("%q: shard index %q is not an integer", s, a)
	}
	n, err := strconv.Atoi(b)
	if err != nil {
		return Spec{}, fmt.Errorf("%q: shard count %q is not an integer", s, b)
	}
	return check(Spec{Index: i, Count: n}, s)
}

func check(sp Spec, text string) (Spec, error) {
	switch {
	case sp.Count < 1:
		return Spec{}, fmt.Errorf("%q: shard count %d is below 1", text, sp.Count)
	case sp.Count > maxCount:
		return Spec{}, fmt.Errorf("%q: shard count %d is above %d", text, sp.Count, maxCount)
	case sp.Index < 0 || sp.Index >= sp.Count:
		return Spec{}, fmt.Errorf("%q: shard index %d is not in 0..%d", text, sp.Index, sp.Count-1)
	}
	return sp, nil
}

// The environment variables FromEnv reads.
const (
	SlurmID    = "SLURM_ARRAY_TASK_ID"
	SlurmCount = "SLURM_ARRAY_TASK_COUNT"
	SlurmMin   = "SLURM_ARRAY_TASK_MIN"
	K8sIndex   = "JOB_COMPLETION_INDEX"
)

// FromEnv returns the shard a job array's environment names, and the
// variables it came from: Kubernetes' JOB_COMPLETION_INDEX with count (the
// Job's completions, which Kubernetes does not put in the environment),
// else Slurm's SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT (less
// SLURM_ARRAY_TASK_MIN, so that an array numbered 1-3 is shards 0 to 2).
// count, when positive, overrides Slurm's count as well. With none of the
// variables set it returns the zero Spec. getenv is os.Getenv in use.
func FromEnv(getenv func(string) string, count int) (Spec, string, error) {
	if v := getenv(K8sIndex); v != "" {
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return Spec{}, "", fmt.Errorf("%s=%q is not an integer", K8sIndex, v)
		}
		if count <= 0 {
			return Spec{}, "", fmt.Errorf("%s=%s is set: give the shard count (the Job's completions) with -shard-count", K8sIndex, v)
		}
		sp, err := check(Spec{Index: i, Count: count}, fmt.Sprintf("%s=%s, count %d", K8sIndex, v, count))
		return sp, K8sIndex, err
	}
	id := getenv(SlurmID)
	if id == "" {
		if count > 0 {
			return Spec{}, "", fmt.Errorf("-shard-count %d: no %s or %s to take the shard index from (give -shard i/n)", count, K8sIndex, SlurmID)
		}
		return Spec{}, "", nil
	}
	i, err := strconv.Atoi(strings.TrimSpace(id))
	if err != nil {
		return Spec{}, "", fmt.Errorf("%s=%q is not an integer", SlurmID, id)
	}
	if m := getenv(SlurmMin); m != "" {
		lo, err := strconv.Atoi(strings.TrimSpace(m))
		if err != nil {
			return Spec{}, "", fmt.Errorf("%s=%q is not an integer", SlurmMin, m)
		}
		i -= lo
	}
	from := SlurmID
	n := count
	if n <= 0 {
		c := getenv(SlurmCount)
		if c == "" {
			return Spec{}, "", fmt.Errorf("%s=%s is set but %s is not: give -shard i/n or -shard-count", SlurmID, id, SlurmCount)
		}
		if n, err = strconv.Atoi(strings.TrimSpace(c)); err != nil {
			return Spec{}, "", fmt.Errorf("%s=%q is not an integer", SlurmCount, c)
		}
		from += " and " + SlurmCount
	}
	sp, err := check(Spec{Index: i, Count: n}, fmt.Sprintf("%s=%s, count %d", SlurmID, id, n))
	return sp, from, err
}

// Split assigns each of the items with the given estimated costs to one
// of n shards and returns each item's shard. It is deterministic: the
// costliest item goes first (ties in list order) to the shard with the
// least cost so far (ties to the lowest shard), the longest-processing-
// time rule, so no shard is above 4/3 of the best split possible. Costs
// that are not positive and finite count as the smallest positive one.
func Split(costs []float64, n int) ([]int, error) {
	if n < 1 {
		return nil, fmt.Errorf("shard: %d shards", n)
	}
	c := make([]float64, len(costs))
	floor := math.Inf(1)
	for _, x := range costs {
		if x > 0 && !math.IsInf(x, 0) && x < floor {
			floor = x
		}
	}
	if math.IsInf(floor, 1) {
		floor = 1
	}
	for i, x := range costs {
		if !(x > 0) || math.IsInf(x, 0) {
			x = floor
		}
		c[i] = x
	}
	order := make([]int, len(c))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return c[order[a]] > c[order[b]] })
	load := make([]float64, n)
	out := make([]int, len(c))
	for _, i := range order {
		best := 0
		for s := 1; s < n; s++ {
			if load[s] < load[best] {
				best = s
			}
		}
		out[i] = best
		load[best] += c[i]
	}
	return out, nil
}

// Loads sums the costs of each shard of an assignment from Split.
func Loads(costs []float64, assign []int, n int) []float64 {
	load := make([]float64, n)
	for i, s := range assign {
		if s >= 0 && s < n {
			load[s] += costs[i]
		}
	}
	return load
}

// ID derives a sweep's ID from its definition: kind, then the first 12
// hex digits of the SHA-256 of def's JSON encoding. def should hold
// everything that decides the points and how they are measured, and
// nothing else (not the output folder, nor the shard), so that the shards
// of one sweep share an ID and any change to a point changes it.
func ID(kind string, def any) (string, error) {
	b, err := json.Marshal(def)
	if err != nil {
		return "", fmt.Errorf("shard: sweep definition: %w", err)
	}
	if kind == "" {
		return "", errors.New("shard: no sweep kind")
	}
	sum := sha256.Sum256(append([]byte(kind+"\x00"), b...))
	return kind + "-" + hex.EncodeToString(sum[:6]), nil
}
