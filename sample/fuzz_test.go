package sample

import (
	"encoding/binary"
	"math"
	"testing"
)

// floats decodes little-endian float32s from data, at most max of them.
func floats(data []byte, max int) []float32 {
	n := min(len(data)/4, max)
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return out
}

func fuzzSampler(kind uint8, a float32, b int) Sampler {
	switch kind % 12 {
	case 0:
		return Greedy()
	case 1:
		return Temperature(a)
	case 2:
		return TopK(b)
	case 3:
		return TopP(a, b)
	case 4:
		return MinP(a, b)
	case 5:
		return Typical(a, b)
	case 6:
		return TailFree(a, b)
	case 7:
		s := Penalties(b, a, a/2, -a)
		for i := range 8 {
			s.Accept(int32(i * b))
		}
		return s
	case 8:
		return Dist(uint64(b))
	case 9:
		return MirostatV1(a, 0.1, b, b, 1)
	case 10:
		return MirostatV2(a, a, uint64(b))
	}
	return NewChain(uint64(b), TopK(b), Temperature(a), TopP(a, 1), MinP(a/4, 0))
}

// Any sampler on any list (NaN, Inf, subnormal logits; any parameter) must
// not panic, must leave a non-empty list a non-empty subset of itself with
// no token twice, and must leave Selected -1 or valid.
func FuzzSamplers(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64}, uint8(3), float32(0.5), 1)
	f.Add([]byte{0, 0, 128, 255, 0, 0, 192, 127, 0, 0, 128, 127, 1, 0, 0, 0}, uint8(9), float32(5), 100)
	for k := range uint8(12) {
		f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, k, float32(0.3), 2)
	}
	f.Fuzz(func(t *testing.T, data []byte, kind uint8, a float32, b int) {
		in := floats(data, 256)
		c := cands(in...)
		s := fuzzSampler(kind, a, b)
		s.Apply(c)
		if len(in) > 0 && len(c.Items) == 0 {
			t.Fatalf("%s emptied a list of %d", s.Name(), len(in))
		}
		if len(c.Items) > len(in) {
			t.Fatalf("%s grew the list from %d to %d", s.Name(), len(in), len(c.Items))
		}
		if c.Selected < -1 || c.Selected >= len(c.Items) {
			t.Fatalf("%s: Selected %d of %d", s.Name(), c.Selected, len(c.Items))
		}
		seen := make(map[int32]bool)
		for _, it := range c.Items {
			if it.ID < 0 || int(it.ID) >= len(in) || seen[it.ID] {
				t.Fatalf("%s: bad or repeated id %d", s.Name(), it.ID)
			}
			seen[it.ID] = true
		}
	})
}

// Chain.Sample on any logit vector returns either an error or a token in
// range whose logit is not -Inf.
func FuzzChainSample(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64}, uint64(1))
	f.Add([]byte{0, 0, 128, 255, 0, 0, 128, 255}, uint64(2))
	f.Add([]byte{0, 0, 192, 127}, uint64(3))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		logits := floats(data, 512)
		p := DefaultParams()
		p.Seed = seed
		p.Temp = float32(seed%4) / 2 // 0 (greedy) to 1.5
		p.Mirostat = int(seed % 3)
		p.RepeatPenalty = 1.2
		if len(logits) == 0 {
			if _, err := FromParams(p, len(logits)); err == nil {
				t.Fatal("FromParams accepted a vocabulary of 0")
			}
			return
		}
		c, err := FromParams(p, len(logits))
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			id, err := c.Sample(logits)
			if err != nil {
				return
			}
			if id < 0 || int(id) >= len(logits) {
				t.Fatalf("token %d out of range [0, %d)", id, len(logits))
			}
			if math.IsInf(float64(logits[id]), -1) {
				t.Fatalf("picked token %d whose logit is -Inf", id)
			}
		}
	})
}
