package bench

import (
	"testing"
	"time"
)

func TestDRAMProbe(t *testing.T) {
	for _, c := range []struct {
		threads int
		bytes   int64
	}{{0, 1 << 20}, {1, 100}, {2, 128 << 30}} {
		if _, err := NewDRAMProbe(c.threads, c.bytes); err == nil {
			t.Errorf("NewDRAMProbe(%d, %d): no error", c.threads, c.bytes)
		}
	}
	p, err := NewDRAMProbe(2, 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	pk := p.Measure(20 * time.Millisecond)
	if pk.Kind != KindRead || pk.Level != LevelDRAM || pk.Threads != 2 || pk.BufferBytes != 16<<20 || pk.Unit != "GB/s" {
		t.Errorf("peak %+v: want a 2-thread dram read of 16 MiB in GB/s", pk)
	}
	if pk.Samples < 3 || !(pk.Median > 0) || pk.Best < pk.Median {
		t.Errorf("peak %+v: want 3 or more samples, 0 < median <= best", pk)
	}
}
