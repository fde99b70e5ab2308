package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/kernbench/kernbench/internal/dynlib"
)

// cuBLAS is a baseline, not a backend: CublasGemm times NVIDIA's own
// matrix product on the shapes the backend's MUL_MAT computes, so that a
// sweep on a GPU shows ours beside it. It is loaded at run time through
// purego like the driver and NVRTC, and only on a GPU.

// cublasLib is cuBLAS: nvidia-cublas-cu12 puts it in nvidia/cublas/lib,
// with libcublasLt, which it needs, beside it.
var cublasLib = toolkitLib{
	Name:      "libcublas",
	Env:       "KERNBENCH_CUBLAS",
	Sonames:   []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"},
	Wheels:    []string{"nvidia/cu13/lib", "nvidia/cublas/lib"},
	Companion: "libcublasLt",
}

// cublasAPI is the cuBLAS subset CublasGemm calls.
type cublasAPI struct {
	lib        string
	create     func(h *uintptr) int32
	destroy    func(h uintptr) int32
	getVersion func(h uintptr, v *int32) int32
	gemmEx     func(h uintptr, transa, transb int32, m, n, k int32, alpha unsafe.Pointer,
		a uint64, atype, lda int32, b uint64, btype, ldb int32, beta unsafe.Pointer,
		c uint64, ctype, ldc int32, compute, algo int32) int32
	// statusName is cublasGetStatusName (cuBLAS 11.4 and later), or nil.
	statusName func(s int32) unsafe.Pointer
}

// loadCublas binds cuBLAS from the first place of the search where it
// loads.
func loadCublas() (*cublasAPI, error) {
	var errs []string
	for _, c := range defaultLibSearch().candidates(cublasLib) {
		h, err := dlopenCandidate(c)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		api := &cublasAPI{lib: c.Lib}
		for _, f := range []struct {
			ptr  any
			name string
		}{
			{&api.create, "cublasCreate_v2"}, {&api.destroy, "cublasDestroy_v2"},
			{&api.getVersion, "cublasGetVersion_v2"}, {&api.gemmEx, "cublasGemmEx"},
		} {
			sym, err := dynlib.Sym(h, f.name)
			if err != nil {
				return nil, fmt.Errorf("%s lacks %s: %w", c.Lib, f.name, err)
			}
			purego.RegisterFunc(f.ptr, sym)
		}
		if sym, err := dynlib.Sym(h, "cublasGetStatusName"); err == nil {
			purego.RegisterFunc(&api.statusName, sym)
		}
		return api, nil
	}
	return nil, fmt.Errorf("no cuBLAS library found (set $KERNBENCH_CUBLAS or $CUDA_HOME; %s)", strings.Join(errs, "; "))
}

// check turns a cublasStatus_t into nil or an error.
func (c *cublasAPI) check(call string, s int32) error {
	if s == 0 {
		return nil
	}
	name := fmt.Sprintf("status %d", s)
	if c.statusName != nil {
		if p := c.statusName(s); p != nil {
			name = cString(p)
		}
	}
	return fmt.Errorf("cuda: %s: %s", call, name)
}

// CublasSearchOrder returns the places cuBLAS is looked for on this
// machine, in order, each as "path (why)".
func CublasSearchOrder() []string { return defaultLibSearch().order(cublasLib) }

// cuBLAS and CUDA enumerations CublasGemm passes.
const (
	cublasOpN          = 0
	cublasOpT          = 1
	cudaR32F           = 0  // CUDA_R_32F
	cudaR16F           = 2  // CUDA_R_16F
	cudaR16BF          = 14 // CUDA_R_16BF
	cublasCompute32F   = 68 // CUBLAS_COMPUTE_32F
	cublasCompute32TF  = 77 // CUBLAS_COMPUTE_32F_FAST_TF32
	cublasGemmDefault  = -1 // CUBLAS_GEMM_DEFAULT
	cublasFillByte     = 0x3c
	cublasTargetSample = 0.02 // seconds of products per sample
	cublasSamples      = 5
)

// A gemmType is how CublasGemm computes a weight type's product.
type gemmType struct {
	in, inBytes int32 // the inputs' cudaDataType and element size
	compute     int32
	// What describes the product, for records.
	What string
}

// gemmTypes are the weight types CublasGemm takes: the output is f32, as
// MUL_MAT's is.
var gemmTypes = map[string]gemmType{
	"f16":  {cudaR16F, 2, cublasCompute32F, "cublasGemmEx f16 x f16, f32 accumulate and output"},
	"bf16": {cudaR16BF, 2, cublasCompute32F, "cublasGemmEx bf16 x bf16, f32 accumulate and output"},
	"f32":  {cudaR32F, 4, cublasCompute32F, "cublasGemmEx f32, f32 compute (no TF32)"},
	"tf32": {cudaR32F, 4, cublasCompute32TF, "cublasGemmEx f32 inputs, TF32 tensor cores"},
}

// CublasTypes returns the types CublasGemm takes, sorted.
func CublasTypes() []string {
	var out []string
	for t := range gemmTypes {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// A GemmTiming is cuBLAS's time for one product shape.
type GemmTiming struct {
	// Median, Samples are seconds per product: the median of the
	// samples, each the mean of a batch of products between two events.
	Median  float64
	Samples []float64
	// PerSample is the products in a batch.
	PerSample int
	// Library is the cuBLAS loaded and Version its version (120304).
	Library string
	Version int
	// What says what was computed ("cublasGemmEx f16 x f16, ...").
	What string
}

// CublasGemm times cuBLAS on GPU ordinal computing what MUL_MAT does with
// m x k weights of typ (f16, bf16, f32, or tf32: f32 on TF32 tensor
// cores) and n x k activations of the same type: an n x m f32 result,
// rows of k contiguous (cublasGemmEx with the weights transposed). The
// inputs hold a constant (0x3c bytes: 1.06 in f16); the time does not
// depend on the values. It needs the NVIDIA driver and cuBLAS.
func CublasGemm(ordinal, m, n, k int, typ string) (GemmTiming, error) {
	gt, ok := gemmTypes[typ]
	if !ok {
		return GemmTiming{}, fmt.Errorf("cuda: cuBLAS baseline: no %s product (it takes %s)", typ, strings.Join(CublasTypes(), ", "))
	}
	if m <= 0 || n <= 0 || k <= 0 || m > 1<<30 || n > 1<<30 || k > 1<<30 {
		return GemmTiming{}, fmt.Errorf("cuda: cuBLAS baseline: bad shape m=%d, n=%d, k=%d", m, n, k)
	}
	api, infos, err := gpus()
	if err != nil {
		return GemmTiming{}, err
	}
	if ordinal < 0 || ordinal >= len(infos) {
		return GemmTiming{}, fmt.Errorf("cuda: no GPU %d (the driver finds %d)", ordinal, len(infos))
	}
	cb, err := loadCublas()
	if err != nil {
		return GemmTiming{}, fmt.Errorf("cuda: %w", err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var dev int32
	if err := api.check("cuDeviceGet", api.cuDeviceGet(&dev, int32(ordinal))); err != nil {
		return GemmTiming{}, err
	}
	var ctx uintptr
	if err := api.check("cuDevicePrimaryCtxRetain", api.cuDevicePrimaryCtxRetain(&ctx, dev)); err != nil {
		return GemmTiming{}, err
	}
	defer api.cuDevicePrimaryCtxRelease(dev)
	if err := api.check("cuCtxSetCurrent", api.cuCtxSetCurrent(ctx)); err != nil {
		return GemmTiming{}, err
	}
	var h uintptr
	if err := cb.check("cublasCreate", cb.create(&h)); err != nil {
		return GemmTiming{}, err
	}
	defer cb.destroy(h)
	var version int32
	cb.getVersion(h, &version)

	sizes := []uint64{uint64(m) * uint64(k) * uint64(gt.inBytes), uint64(n) * uint64(k) * uint64(gt.inBytes), uint64(n) * uint64(m) * 4}
	var bufs [3]uint64
	defer func() {
		for _, p := range bufs {
			if p != 0 {
				api.cuMemFree(p)
			}
		}
	}()
	for i, sz := range sizes {
		if err := api.check("cuMemAlloc", api.cuMemAlloc(&bufs[i], sz)); err != nil {
			return GemmTiming{}, fmt.Errorf("%w (%d bytes)", err, sz)
		}
		if err := api.check("cuMemsetD8Async", api.cuMemsetD8Async(bufs[i], cublasFillByte, sz, 0)); err != nil {
			return GemmTiming{}, err
		}
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	alpha, beta := new(float32), new(float32)
	*alpha = 1
	pin.Pin(alpha)
	pin.Pin(beta)
	gemm := func() int32 {
		// C (m x n, column-major: our n rows of m) = Aᵀ B, A the k x m
		// column-major view of the m rows of k weights.
		return cb.gemmEx(h, cublasOpT, cublasOpN, int32(m), int32(n), int32(k), unsafe.Pointer(alpha),
			bufs[0], gt.in, int32(k), bufs[1], gt.in, int32(k), unsafe.Pointer(beta),
			bufs[2], cudaR32F, int32(m), gt.compute, cublasGemmDefault)
	}
	if err := cb.check("cublasGemmEx", gemm()); err != nil {
		return GemmTiming{}, err
	}
	if err := api.check("cuStreamSynchronize", api.cuStreamSynchronize(0)); err != nil {
		return GemmTiming{}, err
	}
	samples, per, err := timeEvents(api, func() error { return cb.check("cublasGemmEx", gemm()) })
	if err != nil {
		return GemmTiming{}, err
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	return GemmTiming{Median: sorted[len(sorted)/2], Samples: samples, PerSample: per,
		Library: cb.lib, Version: int(version), What: gt.What}, nil
}

// timeEvents times run on the legacy stream between two events: three
// runs to warm up, one to size the batches (cublasTargetSample seconds
// each), then cublasSamples batches. It returns each batch's seconds per
// run and the runs per batch.
func timeEvents(api *driverAPI, run func() error) (samples []float64, per int, err error) {
	var start, end uintptr
	if err := api.check("cuEventCreate", api.cuEventCreate(&start, 0)); err != nil {
		return nil, 0, err
	}
	defer api.cuEventDestroy(start)
	if err := api.check("cuEventCreate", api.cuEventCreate(&end, 0)); err != nil {
		return nil, 0, err
	}
	defer api.cuEventDestroy(end)
	batch := func(n int) (float64, error) {
		if err := api.check("cuEventRecord", api.cuEventRecord(start, 0)); err != nil {
			return 0, err
		}
		for range n {
			if err := run(); err != nil {
				return 0, err
			}
		}
		if err := api.check("cuEventRecord", api.cuEventRecord(end, 0)); err != nil {
			return 0, err
		}
		if err := api.check("cuEventSynchronize", api.cuEventSynchronize(end)); err != nil {
			return 0, err
		}
		var ms float32
		if err := api.check("cuEventElapsedTime", api.cuEventElapsedTime(&ms, start, end)); err != nil {
			return 0, err
		}
		return float64(ms) / 1e3 / float64(n), nil
	}
	if _, err := batch(3); err != nil {
		return nil, 0, err
	}
	one, err := batch(1)
	if err != nil {
		return nil, 0, err
	}
	per = batchSize(one)
	for range cublasSamples {
		s, err := batch(per)
		if err != nil {
			return nil, 0, err
		}
		samples = append(samples, s)
	}
	return samples, per, nil
}

// batchSize returns the runs of one seconds each that fill a sample:
// at least 1, at most 10000.
func batchSize(one float64) int {
	if one <= 0 {
		return 10000
	}
	return int(max(1, min(10000, cublasTargetSample/one)))
}

// errNoCublasOnEmu is CublasGemm's answer on the emulated device.
var errNoCublasOnEmu = errors.New("cuda: cuBLAS runs on a GPU only, not on the emulated device")

// CublasGemmOn is CublasGemm for a backend's name: "cuda-N" is GPU N;
// cuda-emu has no cuBLAS.
func CublasGemmOn(backend string, m, n, k int, typ string) (GemmTiming, error) {
	if backend == "cuda-"+emuVariant {
		return GemmTiming{}, errNoCublasOnEmu
	}
	ordinal := 0
	if backend != "cuda" {
		v, ok := strings.CutPrefix(backend, "cuda-")
		o, err := strconv.Atoi(v)
		if !ok || err != nil || o < 0 {
			return GemmTiming{}, fmt.Errorf("cuda: cuBLAS baseline: backend %q is not a CUDA GPU (cuda-0, cuda-1, ...)", backend)
		}
		ordinal = o
	}
	return CublasGemm(ordinal, m, n, k, typ)
}

// CublasLibrary returns the cuBLAS library that loads here, or why none
// does. Loading it needs no GPU.
func CublasLibrary() (string, error) {
	cb, err := loadCublas()
	if err != nil {
		return "", err
	}
	return cb.lib, nil
}
