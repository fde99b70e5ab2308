package gpu

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// The element-wise ops' supports checks: both GPU backends take the same
// types and parameters.

// SupportsF32 takes a node whose sources and output are f32.
func SupportsF32(t *ops.Tensor) error {
	if t.Type != quant.F32 {
		return fmt.Errorf("output type %v, want f32", t.Type)
	}
	for i, s := range t.Src {
		if s != nil && s.Type != quant.F32 {
			return fmt.Errorf("source %d type %v, want f32", i, s.Type)
		}
	}
	return nil
}

// SupportsBinary takes ADD and MUL of f32 by f32 or f16.
func SupportsBinary(t *ops.Tensor) error {
	if t.Type != quant.F32 || t.Src[0].Type != quant.F32 {
		return fmt.Errorf("types %v = %v op %v, want f32 = f32 op f32 or f16", t.Type, t.Src[0].Type, t.Src[1].Type)
	}
	if b := t.Src[1].Type; b != quant.F32 && b != quant.F16 {
		return fmt.Errorf("b type %v, want f32 or f16", b)
	}
	return nil
}

// SupportsScale takes SCALE of f32 with its parameters.
func SupportsScale(t *ops.Tensor) error {
	if _, ok := t.Params.(ops.ScaleParams); !ok {
		return fmt.Errorf("params are %T, want ops.ScaleParams", t.Params)
	}
	return SupportsF32(t)
}

// SupportsSwiGLU takes SWIGLU of f32 with its parameters.
func SupportsSwiGLU(t *ops.Tensor) error {
	if _, ok := t.Params.(ops.GLUParams); !ok {
		return fmt.Errorf("params are %T, want ops.GLUParams", t.Params)
	}
	return SupportsF32(t)
}

// SupportsSwiGLUOAI takes SWIGLU_OAI of f32 with its parameters.
func SupportsSwiGLUOAI(t *ops.Tensor) error {
	if _, ok := t.Params.(ops.GLUOAIParams); !ok {
		return fmt.Errorf("params are %T, want ops.GLUOAIParams", t.Params)
	}
	return SupportsF32(t)
}
