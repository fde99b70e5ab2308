// Package simdtest holds the helpers of the kernels' differential tests
// (assembly against twin, bit for bit), shared by the kernel packages and
// the backend's tests: random and fuzzer-filled rows of every type at any
// byte offset, special float values, NaN-aware equality, and the check
// for the avx2 tier's CPU features. Only tests import it.
package simdtest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/klauspost/cpuid/v2"

	"github.com/kernbench/kernbench/internal/require"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// HasAVX2 reports whether the host runs the avx2 tier.
// Features $KERNBENCH_CPU_DISABLE names count as absent
// (simd.HideFeatures), as they do for the backend's tiers.
func HasAVX2() bool {
	_ = simd.HideFeatures()
	return cpuid.CPU.Supports(cpuid.AVX, cpuid.AVX2, cpuid.FMA3, cpuid.F16C)
}

// NeedAVX2 skips t on hosts without the avx2 tier. Where the operating
// system lists the tier's features for the CPU but cpuid says otherwise,
// a skip would hide the tier's tests on a CPU that has it: that fails
// under KERNBENCH_STRICT=1.
func NeedAVX2(t testing.TB) {
	t.Helper()
	if HasAVX2() {
		return
	}
	if has, known := OSReportsAVX2(); has && known && !simd.Hidden() {
		require.Skip(t, "the OS lists avx, avx2, fma and f16c for this CPU, but cpuid finds no avx2 tier")
	}
	t.Skip("CPU lacks AVX2/FMA/F16C")
}

// OSReportsAVX2 reports whether the operating system lists the avx2
// tier's features (avx, avx2, fma, f16c) for this CPU, read from Linux's
// /proc/cpuinfo independently of cpuid; known is false where there is no
// such list (other systems, other architectures).
func OSReportsAVX2() (has, known bool) {
	return OSReports("avx", "avx2", "fma", "f16c")
}

// OSReports reports whether the operating system lists every one of
// flags (Linux's /proc/cpuinfo names, such as "avx512f") for this CPU;
// known is false where there is no such list.
func OSReports(flags ...string) (has, known bool) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false, false
	}
	for line := range strings.Lines(string(b)) {
		name, list, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) != "flags" {
			continue
		}
		set := map[string]bool{}
		for _, f := range strings.Fields(list) {
			set[f] = true
		}
		for _, f := range flags {
			if !set[f] {
				return false, true
			}
		}
		return true, true
	}
	return false, false
}

// HasAVX512 reports whether the host runs the avx512 tier's kernels:
// AVX-512 F, BW and VL and BMI2 (with the avx2 tier's features, which
// every such CPU has).
func HasAVX512() bool {
	return HasAVX2() && cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL, cpuid.BMI2)
}

// HasVNNI reports whether the host runs the vnni tier's kernels: the
// avx512 tier's features and AVX512_VNNI (VPDPBUSD).
func HasVNNI() bool { return HasAVX512() && cpuid.CPU.Supports(cpuid.AVX512VNNI) }

// NeedAVX512 skips t on hosts without the avx512 tier; where the
// operating system lists avx512f, avx512bw and avx512vl but cpuid finds
// no tier, that fails under KERNBENCH_STRICT=1 (as NeedAVX2).
func NeedAVX512(t testing.TB) {
	t.Helper()
	if HasAVX512() {
		return
	}
	if has, known := OSReports("avx512f", "avx512bw", "avx512vl"); has && known && !simd.Hidden() {
		require.Skip(t, "the OS lists avx512f, avx512bw and avx512vl for this CPU, but cpuid finds no avx512 tier")
	}
	t.Skip("CPU lacks AVX-512 F/BW/VL")
}

// NeedVNNI skips t on hosts without the vnni tier (as NeedAVX512, with
// avx512_vnni).
func NeedVNNI(t testing.TB) {
	t.Helper()
	if HasVNNI() {
		return
	}
	if has, known := OSReports("avx512f", "avx512bw", "avx512vl", "avx512_vnni"); has && known && !simd.Hidden() {
		require.Skip(t, "the OS lists avx512f, avx512bw, avx512vl and avx512_vnni for this CPU, but cpuid finds no vnni tier")
	}
	t.Skip("CPU lacks AVX-512 F/BW/VL/VNNI")
}

// HasBF16 reports whether the host runs the vnni tier's bfloat16 pair
// kernels: the vnni tier's features and AVX512_BF16 (VDPBF16PS).
func HasBF16() bool { return HasVNNI() && cpuid.CPU.Supports(cpuid.AVX512BF16) }

// NeedBF16 skips t on hosts without AVX512_BF16 (as NeedVNNI, with
// avx512_bf16).
func NeedBF16(t testing.TB) {
	t.Helper()
	if HasBF16() {
		return
	}
	if has, known := OSReports("avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16"); has && known && !simd.Hidden() {
		require.Skip(t, "the OS lists avx512f, avx512bw, avx512vl, avx512_vnni and avx512_bf16 for this CPU, but cpuid finds no AVX512_BF16")
	}
	t.Skip("CPU lacks AVX-512 F/BW/VL/VNNI/BF16")
}

// SameFloat reports whether a and b have the same bits or are both NaN.
func SameFloat(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// Special are float32 values the differential tests mix into float
// inputs: zeros, denormals, the extremes, infinities and NaNs.
var Special = []float32{
	0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
	math.Float32frombits(0x007fffff), 1e-39, math.MaxFloat32, -math.MaxFloat32,
	float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1, -1, 3e38, 1e-30,
}

// AlignedBytes returns n zero bytes starting at an 8-byte boundary.
func AlignedBytes(n int64) []byte {
	if n <= 0 {
		return nil
	}
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), n)
}

// Row returns a row of n elements of type wt at byte offset off of a
// fresh buffer (so the row is misaligned when off is not a multiple of
// 32): random bytes for block types, random values for float types,
// a fraction special of them replaced by Special values.
func Row(rng *rand.Rand, wt quant.Type, n, off int, special float64) []byte {
	size, err := wt.RowSize(int64(n))
	if err != nil {
		panic(err)
	}
	buf := AlignedBytes(size + int64(off) + 1)[off : int64(off)+size]
	if !wt.IsFloat() {
		for i := range buf {
			buf[i] = byte(rng.Uint32())
		}
		FixBsums(wt, buf)
		return buf
	}
	vals := make([]float32, n)
	scale := float32(1)
	if rng.IntN(4) == 0 {
		scale = float32(math.Ldexp(1, rng.IntN(200)-100))
	}
	for i := range vals {
		vals[i] = (2*rng.Float32() - 1) * scale
		if rng.Float64() < special {
			vals[i] = Special[rng.IntN(len(Special))]
		}
	}
	for i, v := range vals {
		switch wt {
		case quant.F32:
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
		case quant.F16:
			binary.LittleEndian.PutUint16(buf[2*i:], quant.FP32ToFP16(v))
		case quant.BF16:
			binary.LittleEndian.PutUint16(buf[2*i:], quant.FP32ToBF16(v))
		}
	}
	return buf
}

// FillRow returns a row of n elements of type t at offset off of a
// fresh buffer, its bytes taken cyclically from data (zeros when data is
// empty).
func FillRow(t quant.Type, n, off int, data []byte) []byte {
	size, err := t.RowSize(int64(n))
	if err != nil {
		panic(fmt.Sprint(t, n, err))
	}
	buf := AlignedBytes(size + int64(off) + 1)[off : int64(off)+size]
	if len(data) > 0 {
		for i := range buf {
			buf[i] = data[i%len(data)] ^ byte(i/len(data))
		}
	}
	FixBsums(t, buf)
	return buf
}

// Rows4 returns four rows of n elements of type wt, ldx bytes apart at
// offset off of a fresh buffer (random bytes between them), each from
// Row, or from data when data is not nil: the weights of a four-row
// kernel.
func Rows4(rng *rand.Rand, wt quant.Type, n, ldx, off int, special float64, data []byte) []byte {
	rowBytes, _ := wt.RowSize(int64(n))
	buf := AlignedBytes(int64(3*ldx) + rowBytes + int64(off) + 1)[off : int64(off+3*ldx)+rowBytes]
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	for r := range 4 {
		var row []byte
		if data != nil {
			row = FillRow(wt, n, 0, data[r*len(data)/4:])
		} else {
			row = Row(rng, wt, n, 0, special)
		}
		copy(buf[r*ldx:], row)
	}
	return buf
}

// FixBsums rewrites the bsums of every q8_K block of row as the sums of
// its codes, which every q8_K quantizer guarantees and the AVX2 K-format
// dot products rely on; other types are left alone.
func FixBsums(t quant.Type, row []byte) {
	if t != quant.Q8_K {
		return
	}
	for b := 0; b+simd.BytesQ8_K <= len(row); b += simd.BytesQ8_K {
		for j := range 16 {
			var s int16
			for _, q := range row[b+4+16*j : b+4+16*j+16] {
				s += int16(int8(q))
			}
			binary.LittleEndian.PutUint16(row[b+260+2*j:], uint16(s))
		}
	}
}

// MustRowSize returns the size of a row of n elements of typ.
func MustRowSize(t testing.TB, typ quant.Type, n int) int64 {
	t.Helper()
	s, err := typ.RowSize(int64(n))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ReportCPU reports flops per op over the process CPU time cpu (seconds,
// from ProcessCPUSeconds) as cpu-GFLOP/s, steadier than wall time on a
// shared machine.
func ReportCPU(b *testing.B, flops, cpu float64) {
	if cpu > 0 {
		b.ReportMetric(flops*float64(b.N)/cpu/1e9, "cpu-GFLOP/s")
	}
}
