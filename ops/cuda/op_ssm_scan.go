package cuda

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
)

// SSM_SCAN: kernels/ssm_scan.cu.

func init() {
	kernelsByOp.Add(ops.OpSSMScan, supportsSSMScan, launchSSMScan)
}

// scanStates is the largest d_state the scan kernels hold in registers:
// 16 states a lane, 32 lanes a row.
const scanStates = 16 * 32

func supportsSSMScan(t *ops.Tensor) error {
	if err := ops.CheckSSMScan(t); err != nil {
		return err
	}
	s, x := t.Src[ops.ScanState], t.Src[ops.ScanX]
	dState, headDim, nHead, nSeqs := s.Ne[0], s.Ne[1], s.Ne[2], x.Ne[3]
	if dState > scanStates {
		return fmt.Errorf("d_state %d is more than the kernels hold (%d)", dState, scanStates)
	}
	if nSeqs > 65535 || headDim*nHead > 1<<31-1 {
		return fmt.Errorf("%d sequences of %d rows, more than a grid takes", nSeqs, headDim*nHead)
	}
	return nil
}

// scanThreads is SSM_SCAN's block size.
const scanThreads = 128

// launchSSMScan picks the kernel holding 4 states a lane (d_state up to
// 128: 32 lanes a row for Mamba-2's 128, 4 for Mamba-1's 16) or 16, and
// the lanes per row.
func launchSSMScan(b *Backend, t *ops.Tensor) error {
	src, dst, err := b.pointers(t)
	if err != nil {
		return err
	}
	s, B := t.Src[0], t.Src[ops.ScanB]
	dState, headDim, nHead, nSeqs := s.Ne[0], s.Ne[1], s.Ne[2], t.Src[ops.ScanX].Ne[3]
	ns := int64(4)
	if dState > 4*32 {
		ns = 16
	}
	lanes := pow2((dState + ns - 1) / ns)
	rowsPerBlock := scanThreads / lanes
	nGroup := B.Ne[1]
	blocksPerGroup := (nHead/nGroup*headDim + rowsPerBlock - 1) / rowsPerBlock
	if nSeqs == 0 {
		return nil
	}
	args := [][]byte{}
	for i, x := range t.Src {
		args = append(args, u64(src[i]), tensorArg(x))
	}
	status, err := b.statusFor(t, func(_, v int32) error {
		return fmt.Errorf("SSM_SCAN: state slot id %d outside the %d slots", v, s.Ne[3])
	})
	if err != nil {
		return err
	}
	args = append(args, u64(dst), i32(int32(lanes)), u64(status))
	return b.launch("ssm_scan.cu", fmt.Sprintf("kb_ssm_scan_f32_%d", ns), dim3{uint32(nGroup * blocksPerGroup), uint32(nSeqs), 1},
		dim3{scanThreads, 1, 1}, int(16*dState), args...)
}
