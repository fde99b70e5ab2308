package cuda

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// SSM_SCAN: kernels/ssm_scan.cu.

func init() {
	kernelsByOp.Add(ops.OpSSMScan, supportsSSMScan, launchSSMScan)
}

// scanStates is the largest d_state the scan kernels hold in registers:
// 16 states a lane, 32 lanes a row.
const scanStates = 16 * 32

func supportsSSMScan(t *ops.Tensor) error {
	if len(t.Src) != 7 {
		return fmt.Errorf("%d sources, want 7", len(t.Src))
	}
	for i, x := range t.Src {
		want := quant.F32
		if i == ops.ScanIDs {
			want = quant.I32
		}
		if x == nil || x.Type != want {
			return fmt.Errorf("source %d is not %v", i, want)
		}
	}
	if t.Type != quant.F32 {
		return fmt.Errorf("output type %v, want f32", t.Type)
	}
	s, x, dt, A, B, C, ids := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4], t.Src[5], t.Src[6]
	dState, headDim, nHead := s.Ne[0], s.Ne[1], s.Ne[2]
	nTok, nSeqs := x.Ne[2], x.Ne[3]
	switch {
	case x.Ne[0] != headDim || x.Ne[1] != nHead:
		return fmt.Errorf("x %v does not match s %v", x.Ne, s.Ne)
	case dt.Ne != [ops.MaxDims]int64{nHead, nTok, nSeqs, 1}:
		return fmt.Errorf("dt %v, want [%d %d %d 1]", dt.Ne, nHead, nTok, nSeqs)
	case A.Ne[0] != dState && A.Ne[0] != 1 || A.Ne[1] != nHead || A.Ne[2] != 1 || A.Ne[3] != 1:
		return fmt.Errorf("operand A %v, want [%d or 1, %d]", A.Ne, dState, nHead)
	case B.Ne != C.Ne:
		return fmt.Errorf("operands B %v and C %v differ", B.Ne, C.Ne)
	case B.Ne[0] != dState || B.Ne[1] <= 0 || nHead%B.Ne[1] != 0 || B.Ne[2] != nTok || B.Ne[3] != nSeqs:
		return fmt.Errorf("operand B %v, want [%d, n_group | %d, %d, %d]", B.Ne, dState, nHead, nTok, nSeqs)
	case ids.Ne[0] != nSeqs || ids.NumElements() != nSeqs:
		return fmt.Errorf("ids %v, want [%d]", ids.Ne, nSeqs)
	case s.Ne[3] < nSeqs:
		return fmt.Errorf("%d state slots for %d sequences", s.Ne[3], nSeqs)
	}
	if want := [ops.MaxDims]int64{x.NumElements() + dState*headDim*nHead*nSeqs, 1, 1, 1}; t.Ne != want {
		return fmt.Errorf("result shape %v, want %v", t.Ne, want)
	}
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
