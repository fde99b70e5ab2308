package reference

import (
	"math"
	"testing"

	"github.com/kernbench/kernbench/ops"
)

func TestSSMConv(t *testing.T) {
	// Two channels of d_conv-1+n_t = 4 steps, two sequences. Sequence 0:
	// both channels are the ramp 0 1 2 3; sequence 1: channel 0 is all 10,
	// channel 1 the ramp 3 2 1 0. Channel 0's kernel is [1 1 1] (a sum of
	// three), channel 1's [1 0 -1] (first minus third).
	sx := f32(t, dims(4, 2, 2),
		0, 1, 2, 3, 0, 1, 2, 3,
		10, 10, 10, 10, 3, 2, 1, 0)
	c := f32(t, dims(3, 2), 1, 1, 1, 1, 0, -1)
	got := compute(t, must(t)(ops.SSMConv(sx, c)))
	// dst is [d_inner, n_t, n_s].
	near(t, got, []float64{
		0 + 1 + 2, 0 - 2, 1 + 2 + 3, 1 - 3,
		30, 3 - 1, 30, 2 - 0,
	}, 0)
}

// scan holds the operands of an SSM_SCAN case, as values and shapes.
type scan struct {
	s, x, dt, A, B, C, ids []float64
	sNe, xNe, dtNe, ANe    []int64
	bcNe                   []int64
}

func (sc scan) node(t *testing.T) *ops.Tensor {
	t.Helper()
	return must(t)(ops.SSMScan(f32(t, sc.sNe, sc.s...), f32(t, sc.xNe, sc.x...), f32(t, sc.dtNe, sc.dt...),
		f32(t, sc.ANe, sc.A...), f32(t, sc.bcNe, sc.B...), f32(t, sc.bcNe, sc.C...), i32(t, dims(int64(len(sc.ids))), sc.ids...)))
}

func TestSSMScan(t *testing.T) {
	ln2, E := math.Ln2, math.Exp(-3)
	tests := []struct {
		name string
		sc   scan
		tol  float64
		want []float64
	}{{
		// One state, one head, two tokens. dt = 0: dt' = softplus(0) = ln 2,
		// and A = -1 makes the decay exp(-ln 2) = 1/2. From state 4:
		// token 0: 4/2 + B*x*dt' = 2 + 2 ln2, y = C*state = 2 + 2 ln2;
		// token 1: (2 + 2 ln2)/2 + 6 ln2 = 1 + 7 ln2, y = 3 + 21 ln2.
		name: "two steps",
		sc: scan{
			s: []float64{4}, sNe: dims(1, 1, 1, 1),
			x: []float64{2, 6}, xNe: dims(1, 1, 2, 1),
			dt: []float64{0, 0}, dtNe: dims(1, 2, 1),
			A: []float64{-1}, ANe: dims(1, 1),
			B: []float64{1, 1}, C: []float64{1, 3}, bcNe: dims(1, 1, 2, 1),
			ids: []float64{0},
		},
		tol:  1e-15,
		want: []float64{2 + 2*ln2, 3 + 21*ln2, 1 + 7*ln2},
	}, {
		// dt above 20 is used as is: 1 + B*x*30 with no decay (A = 0).
		name: "dt above 20",
		sc: scan{
			s: []float64{1}, sNe: dims(1, 1, 1, 1),
			x: []float64{1}, xNe: dims(1, 1, 1, 1),
			dt: []float64{30}, dtNe: dims(1, 1, 1),
			A: []float64{0}, ANe: dims(1, 1),
			B: []float64{2}, C: []float64{1}, bcNe: dims(1, 1, 1, 1),
			ids: []float64{0},
		},
		tol:  0,
		want: []float64{61, 61},
	}, {
		// dt = 20 is not above 20: softplus(20) = 20 + ln(1 + e^-20).
		name: "dt at 20",
		sc: scan{
			s: []float64{0}, sNe: dims(1, 1, 1, 1),
			x: []float64{1}, xNe: dims(1, 1, 1, 1),
			dt: []float64{20}, dtNe: dims(1, 1, 1),
			A: []float64{0}, ANe: dims(1, 1),
			B: []float64{1}, C: []float64{1}, bcNe: dims(1, 1, 1, 1),
			ids: []float64{0},
		},
		tol:  1e-15,
		want: []float64{20 + math.Log1p(math.Exp(-20)), 20 + math.Log1p(math.Exp(-20))},
	}, {
		// Mamba-1 A [d_state, n_head], four heads in two groups, starting
		// from slot 1 of 2 (slot 0 holds 100s that must not be read).
		// dt' = 30; A[0, h] = 0 and A[1, h] = -0.1 decay state 1 by e^-3.
		// Heads 0 and 1 read group 0 (B = [1 0], C = [1 1]), heads 2 and 3
		// group 1 (B = [0 1], C = [1 2]). Every state starts at [1 1]:
		// head 0 (x=1): [1+30, E]      y = 31 + E
		// head 1 (x=2): [1+60, E]      y = 61 + E
		// head 2 (x=3): [1, E+90]      y = 1 + 2(E+90)
		// head 3 (x=4): [1, E+120]     y = 1 + 2(E+120)
		name: "groups and slots",
		sc: scan{
			s: []float64{
				100, 100, 100, 100, 100, 100, 100, 100,
				1, 1, 1, 1, 1, 1, 1, 1,
			}, sNe: dims(2, 1, 4, 2),
			x: []float64{1, 2, 3, 4}, xNe: dims(1, 4, 1, 1),
			dt: []float64{30, 30, 30, 30}, dtNe: dims(4, 1, 1),
			A: []float64{0, -0.1, 0, -0.1, 0, -0.1, 0, -0.1}, ANe: dims(2, 4),
			B: []float64{1, 0, 0, 1}, C: []float64{1, 1, 1, 2}, bcNe: dims(2, 2, 1, 1),
			ids: []float64{1},
		},
		tol: 1e-6, // A = -0.1 is stored as f32
		want: []float64{
			31 + E, 61 + E, 181 + 2*E, 241 + 2*E,
			31, E, 61, E, 1, E + 90, 1, E + 120,
		},
	}, {
		// Two sequences of two tokens over head_dim 2, sequence 0 from slot
		// 1 ([100 200]) and sequence 1 from slot 0 ([0 0]). No decay,
		// dt' = 30, B = C = 1: each token adds 30*x and y is the state.
		name: "sequences",
		sc: scan{
			s: []float64{0, 0, 100, 200}, sNe: dims(1, 2, 1, 2),
			x: []float64{1, 2, 0, 1, 3, 0, 1, 1}, xNe: dims(2, 1, 2, 2),
			dt: []float64{30, 30, 30, 30}, dtNe: dims(1, 2, 2),
			A: []float64{0}, ANe: dims(1, 1),
			B: []float64{1, 1, 1, 1}, C: []float64{1, 1, 1, 1}, bcNe: dims(1, 1, 2, 2),
			ids: []float64{1, 0},
		},
		tol: 0,
		want: []float64{
			130, 260, 130, 290, 90, 0, 120, 30, // y, x's layout
			130, 290, 120, 30, // final states, per sequence
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			near(t, compute(t, tc.sc.node(t)), tc.want, tc.tol)
		})
	}
}

func TestSSMScanBadSlot(t *testing.T) {
	for _, id := range []float64{2, -1} {
		sc := scan{
			s: []float64{0, 0}, sNe: dims(1, 1, 1, 2),
			x: []float64{1}, xNe: dims(1, 1, 1, 1),
			dt: []float64{0}, dtNe: dims(1, 1, 1),
			A: []float64{0}, ANe: dims(1, 1),
			B: []float64{1}, C: []float64{1}, bcNe: dims(1, 1, 1, 1),
			ids: []float64{id},
		}
		if got, err := Compute(sc.node(t)); err == nil {
			t.Errorf("slot id %v: Compute = %v, want an error", id, got)
		}
	}
}
