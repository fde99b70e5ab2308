package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepRooflineOldID checks that a Zen 3 roofline.json written when
// machine IDs had no microarchitecture ("amd-epyc-2c") is taken as that
// machine kind's roofline by a sweep on it (ID "amd-epyc-zen3-2c") rather
// than measured again over it, and that a Zen 4 with the same brand string
// does not take it. The committed Zen 3 file serves as the sample, with its
// ID rewritten to the old form whatever form it was last written in, so the
// test holds when a session measures the roofline again.
func TestSweepRooflineOldID(t *testing.T) {
	committed := filepath.Join("..", "..", "results", "amd-epyc-zen3-2c", rooflineFile)
	b, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`"id": "amd-epyc-zen3-2c"`), []byte(`"id": "amd-epyc-2c"`), 1)
	dir := t.TempDir()
	oldFile := filepath.Join(dir, "old-"+rooflineFile)
	if err := os.WriteFile(oldFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rf, err := readRooflineFile(oldFile)
	if err != nil {
		t.Fatal(err)
	}
	if rf.Machine.ID != "amd-epyc-2c" || rf.Machine.Kind() != "amd-epyc-zen3-2c" {
		t.Fatalf("roofline with the old ID: ID %q, kind %q", rf.Machine.ID, rf.Machine.Kind())
	}
	if err := os.WriteFile(filepath.Join(dir, rooflineFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	zen3 := rf.Machine
	zen3.ID = zen3.Kind()
	var stderr bytes.Buffer
	r, err := sweepRoofline(sweepConfig{roofline: "auto", threads: []int{1, 2}}, zen3, dir, &stderr)
	if err != nil || r == nil || !strings.Contains(stderr.String(), "roofline: from") {
		t.Fatalf("Zen 3: roofline %v, err %v, stderr %q; want the committed file", r, err, stderr.String())
	}

	zen4 := rf.Machine
	zen4.Model = 17
	zen4.ID = zen4.Kind()
	stderr.Reset()
	if _, err := sweepRoofline(sweepConfig{roofline: filepath.Join(dir, rooflineFile), threads: []int{1}}, zen4, dir, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "is of machine amd-epyc-zen3-2c, this is amd-epyc-zen4-2c") {
		t.Errorf("Zen 4 given the Zen 3 file: stderr %q, want a note that they differ", stderr.String())
	}

	// The committed file as it is serves the Zen 3 sweep too.
	now := t.TempDir()
	raw, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(now, rooflineFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	r, err = sweepRoofline(sweepConfig{roofline: "auto", threads: []int{1, 2}}, zen3, now, &stderr)
	if err != nil || r == nil || !strings.Contains(stderr.String(), "roofline: from") {
		t.Fatalf("Zen 3, committed file: roofline %v, err %v, stderr %q; want the committed file", r, err, stderr.String())
	}
}
