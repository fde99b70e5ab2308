package ops

import (
	"fmt"
	"strings"
)

// Op identifies the operation that computes a tensor.
type Op int

// The operations. Names follow ggml (GGML_OP_*).
const (
	OpNone      Op = iota // a leaf: weights or inputs, computed by nobody
	OpView                // a strided view of another tensor's storage
	OpReshape             // a contiguous tensor seen with another shape
	OpPermute             // dimensions reordered
	OpTranspose           // dimensions 0 and 1 swapped
	OpMulMat
	OpMulMatID
	OpSoftMax
	OpFlashAttnExt
	OpSSMConv
	OpSSMScan
	OpRope
	OpRMSNorm
	OpGetRows
	OpAdd
	OpMul
	OpScale
	OpCpy
	OpCont
	OpSilu
	OpGelu
	OpSwiGLU
	OpArgsort
	OpSumRows
	OpSwiGLUOAI
	numOps
)

var opNames = [numOps]string{
	OpNone:         "NONE",
	OpView:         "VIEW",
	OpReshape:      "RESHAPE",
	OpPermute:      "PERMUTE",
	OpTranspose:    "TRANSPOSE",
	OpMulMat:       "MUL_MAT",
	OpMulMatID:     "MUL_MAT_ID",
	OpSoftMax:      "SOFT_MAX",
	OpFlashAttnExt: "FLASH_ATTN_EXT",
	OpSSMConv:      "SSM_CONV",
	OpSSMScan:      "SSM_SCAN",
	OpRope:         "ROPE",
	OpRMSNorm:      "RMS_NORM",
	OpGetRows:      "GET_ROWS",
	OpAdd:          "ADD",
	OpMul:          "MUL",
	OpScale:        "SCALE",
	OpCpy:          "CPY",
	OpCont:         "CONT",
	OpSilu:         "SILU",
	OpGelu:         "GELU",
	OpSwiGLU:       "SWIGLU",
	OpArgsort:      "ARGSORT",
	OpSumRows:      "SUM_ROWS",
	OpSwiGLUOAI:    "SWIGLU_OAI",
}

// String returns the op's ggml name, such as "MUL_MAT".
func (o Op) String() string {
	if o >= 0 && o < numOps {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// IsView reports whether the op only reinterprets its source's storage
// (VIEW, RESHAPE, PERMUTE, TRANSPOSE): such nodes compute nothing.
func (o Op) IsView() bool {
	return o == OpView || o == OpReshape || o == OpPermute || o == OpTranspose
}

// ComputeOps returns every op that computes data, in declaration order.
func ComputeOps() []Op {
	var out []Op
	for o := OpMulMat; o < numOps; o++ {
		out = append(out, o)
	}
	return out
}

// ParseOp parses an op name, case-insensitively ("mul_mat", "MUL_MAT").
func ParseOp(s string) (Op, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	for o := OpNone; o < numOps; o++ {
		if opNames[o] == u {
			return o, nil
		}
	}
	var names []string
	for _, o := range ComputeOps() {
		names = append(names, strings.ToLower(o.String()))
	}
	return OpNone, fmt.Errorf("ops: unknown op %q (known: %s)", s, strings.Join(names, ", "))
}
