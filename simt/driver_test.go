package simt

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
)

// drv is the emulated CUDA driver's API, loaded the way a backend loads
// libcuda.so.1.
type drv struct {
	init       func(flags uint32) int32
	deviceGet  func(d *int32, ordinal int32) int32
	attribute  func(v *int32, attr int32, d int32) int32
	memAlloc   func(p *uint64, size uintptr) int32
	memFree    func(p uint64) int32
	htod       func(dst uint64, src unsafe.Pointer, n uintptr) int32
	dtoh       func(dst unsafe.Pointer, src uint64, n uintptr) int32
	loadData   func(mod *unsafe.Pointer, image unsafe.Pointer) int32
	getFunc    func(fn *unsafe.Pointer, mod unsafe.Pointer, name string) int32
	launch     func(fn unsafe.Pointer, gx, gy, gz, bx, by, bz, shared uint32, stream unsafe.Pointer, params unsafe.Pointer, extra unsafe.Pointer) int32
	errName    func(e int32, s *unsafe.Pointer) int32
	eventNew   func(ev *unsafe.Pointer, flags uint32) int32
	eventRec   func(ev, stream unsafe.Pointer) int32
	eventSince func(ms *float32, a, b unsafe.Pointer) int32
}

func loadDriver(t *testing.T) (*Device, *drv) {
	d := device(t)
	h, err := purego.Dlopen(d.DriverLibrary(), purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	var f drv
	for _, r := range []struct {
		p    any
		name string
	}{
		{&f.init, "cuInit"}, {&f.deviceGet, "cuDeviceGet"}, {&f.attribute, "cuDeviceGetAttribute"},
		{&f.memAlloc, "cuMemAlloc_v2"}, {&f.memFree, "cuMemFree_v2"}, {&f.htod, "cuMemcpyHtoD_v2"}, {&f.dtoh, "cuMemcpyDtoH_v2"},
		{&f.loadData, "cuModuleLoadData"}, {&f.getFunc, "cuModuleGetFunction"}, {&f.launch, "cuLaunchKernel"},
		{&f.errName, "cuGetErrorName"}, {&f.eventNew, "cuEventCreate"}, {&f.eventRec, "cuEventRecord"}, {&f.eventSince, "cuEventElapsedTime"},
	} {
		purego.RegisterLibFunc(r.p, h, r.name)
	}
	if e := f.init(0); e != 0 {
		t.Fatalf("cuInit: %d", e)
	}
	return d, &f
}

func TestEmulatedDriver(t *testing.T) {
	d, f := loadDriver(t)
	var major, minor int32
	if f.attribute(&major, 75, 0) != 0 || f.attribute(&minor, 76, 0) != 0 || major != 8 {
		t.Errorf("compute capability %d.%d, want 8.0", major, minor)
	}
	text := []byte(`extern "C" __global__ void scale(const float* x, float* y, float s, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i <= n) y[i] = s * x[i];
}`)
	img, err := d.ModuleImage(Program{Dialect: CUDA, Main: Source{Name: "scale.cu", Text: text}}, Checked)
	if err != nil {
		t.Fatal(err)
	}
	var mod, fn unsafe.Pointer
	if e := f.loadData(&mod, unsafe.Pointer(&img[0])); e != 0 {
		t.Fatalf("cuModuleLoadData: %d", e)
	}
	if e := f.getFunc(&fn, mod, "scale"); e != 0 {
		t.Fatalf("cuModuleGetFunction: %d", e)
	}
	var missing unsafe.Pointer
	if e := f.getFunc(&missing, mod, "nope"); e != 500 {
		t.Errorf("cuModuleGetFunction of a missing kernel: %d, want CUDA_ERROR_NOT_FOUND", e)
	}
	const n = 1000
	host := make([]float32, n)
	for i := range host {
		host[i] = float32(i)
	}
	var x, y uint64
	if f.memAlloc(&x, 4*n) != 0 || f.memAlloc(&y, 4*n) != 0 {
		t.Fatal("cuMemAlloc_v2 failed")
	}
	defer f.memFree(x)
	defer f.memFree(y)
	f.htod(x, unsafe.Pointer(&host[0]), 4*n)
	launch := func(count int32) int32 {
		s := float32(2)
		cnt := count
		params := []unsafe.Pointer{unsafe.Pointer(&x), unsafe.Pointer(&y), unsafe.Pointer(&s), unsafe.Pointer(&cnt)}
		return f.launch(fn, (n+255)/256, 1, 1, 256, 1, 1, 0, nil, unsafe.Pointer(&params[0]), nil)
	}
	var ev0, ev1 unsafe.Pointer
	f.eventNew(&ev0, 0)
	f.eventNew(&ev1, 0)
	f.eventRec(ev0, nil)
	if e := launch(n - 1); e != 0 {
		t.Fatalf("cuLaunchKernel: %d (%v)", e, d.LastDriverFault())
	}
	f.eventRec(ev1, nil)
	var ms float32
	if f.eventSince(&ms, ev0, ev1) != 0 || ms < 0 {
		t.Errorf("cuEventElapsedTime: %v ms", ms)
	}
	out := make([]byte, 4*n)
	f.dtoh(unsafe.Pointer(&out[0]), y, 4*n)
	for i := 0; i < n; i++ {
		if v := math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:])); v != 2*float32(i) {
			t.Fatalf("y[%d] = %v", i, v)
		}
	}
	if d.LastDriverFault() != nil {
		t.Error("a fault is reported after a good launch")
	}
	// The off-by-one bound makes thread n read past the end of x.
	e := launch(n)
	var name unsafe.Pointer
	f.errName(e, &name)
	if goString(name) != "CUDA_ERROR_ILLEGAL_ADDRESS" {
		t.Errorf("faulty launch: %s, want CUDA_ERROR_ILLEGAL_ADDRESS", goString(name))
	}
	err = d.LastDriverFault()
	var fl *Fault
	if !errors.As(err, &fl) || fl.Kind != OutOfBounds || fl.Kernel != "scale" || len(fl.Where) != 1 || fl.Where[0] != "scale.cu:3 (read) in scale" {
		t.Errorf("fault: %v (%+v)", err, fl)
	}
}
