package metal

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
)

// SSM_SCAN: kernels/ssm_scan.metal.

func init() {
	kernelsByOp.AddChecked(ops.OpSSMScan, supportsSSMScan, encodeSSMScan, func(t *ops.Tensor, _, id int32) error {
		return fmt.Errorf("SSM_SCAN: state slot id %d outside the %d slots", id, t.Src[ops.ScanState].Ne[3])
	})
}

// ssmMaxState is the largest d_state the scan takes: one thread per state
// element.
const ssmMaxState = 1024

func supportsSSMScan(t *ops.Tensor) error {
	if err := ops.CheckSSMScan(t); err != nil {
		return err
	}
	if t.Src[ops.ScanState].Ne[0] > ssmMaxState {
		return fmt.Errorf("d_state %d: the kernel takes up to %d", t.Src[ops.ScanState].Ne[0], ssmMaxState)
	}
	if !t.IsContiguous() {
		return fmt.Errorf("the result must be contiguous")
	}
	for i, s := range t.Src {
		if i == ops.ScanIDs {
			continue
		}
		if err := gpu.SupportsF32(&ops.Tensor{Type: t.Type, Src: []*ops.Tensor{s}}); err != nil {
			return err
		}
	}
	return nil
}

func encodeSSMScan(e *encoder, t *ops.Tensor) error {
	bs := []binding{}
	for i, s := range t.Src {
		b, err := e.src(1+i, s)
		if err != nil {
			return err
		}
		bs = append(bs, b)
	}
	d, err := e.out(8, t)
	if err != nil {
		return err
	}
	x := t.Src[ops.ScanX]
	var s gpu.CStruct
	for _, src := range t.Src {
		s.Tensor(src)
	}
	s.I64(x.NumElements())
	st := t.Src[ops.ScanState]
	grid := [3]int{int(st.Ne[1]), int(st.Ne[2]), int(x.Ne[3])}
	all := append([]binding{args(&s)}, bs...)
	all = append(all, d, e.statusAt(9))
	return e.dispatch("ssm_scan.metal", "kb_ssm_scan_f32", grid, [3]int{rowThreads(st.Ne[0], ssmMaxState), 1, 1}, nil, all...)
}
