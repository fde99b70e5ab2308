package rope

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSinCos checks SinCos against math.Sincos over the angles
// ROPE meets (positions up to 10⁶ times speeds up to 1, and a few up to
// FastAngle): the difference must stay far below float32 rounding.
func TestSinCos(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	thetas := []float64{0, math.Copysign(0, -1), 1e-300, math.Pi / 4, math.Pi / 2, math.Pi, -math.Pi, 1e6, -1e6, FastAngle, -FastAngle}
	for i := range 20000 {
		switch i % 3 {
		case 0:
			thetas = append(thetas, (rng.Float64()*2-1)*10)
		case 1:
			thetas = append(thetas, float64(rng.IntN(2000000)-1000000)*math.Pow(10000, -rng.Float64()))
		default:
			thetas = append(thetas, (rng.Float64()*2-1)*FastAngle)
		}
	}
	for _, th := range thetas {
		s, c := SinCos(th)
		ws, wc := math.Sincos(th)
		// Beyond 2^20 the float64 angle itself is only known to ~1e-10.
		lim := 4e-16
		if math.Abs(th) > 1<<20 {
			lim = 1e-15 * math.Abs(th) / (1 << 20)
		}
		if math.Abs(s-ws) > lim || math.Abs(c-wc) > lim {
			t.Fatalf("θ=%v: sin %v cos %v, want %v %v", th, s, c, ws, wc)
		}
	}
}
