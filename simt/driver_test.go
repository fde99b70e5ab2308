package simt

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/kernbench/kernbench/internal/dynlib"
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
	retain     func(ctx *unsafe.Pointer, d int32) int32
	release    func(d int32) int32
}

func loadDriver(t *testing.T) (*Device, *drv) {
	d := device(t)
	h, err := dynlib.Open(d.DriverLibrary(), dynlib.Local)
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
		{&f.retain, "cuDevicePrimaryCtxRetain"}, {&f.release, "cuDevicePrimaryCtxRelease_v2"},
	} {
		purego.RegisterLibFunc(r.p, h, r.name)
	}
	if e := f.init(0); e != 0 {
		t.Fatalf("cuInit: %d", e)
	}
	// A context of the test's own, as a backend retains one: a sticky
	// fault in it ends with the test.
	var ctx unsafe.Pointer
	if e := f.retain(&ctx, 0); e != 0 {
		t.Fatalf("cuDevicePrimaryCtxRetain: %d", e)
	}
	t.Cleanup(func() { f.release(0) })
	return d, &f
}

// name is the name of a CUresult.
func (f *drv) name(e int32) string {
	var s unsafe.Pointer
	f.errName(e, &s)
	return goString(s)
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
	// The illegal address is sticky, as on a GPU: every later call on the
	// context fails with it, naming the same fault, until the context is
	// destroyed (its last retain released); a new one works.
	var z uint64
	if e := f.memAlloc(&z, 64); f.name(e) != "CUDA_ERROR_ILLEGAL_ADDRESS" {
		t.Errorf("cuMemAlloc after the fault: %s, want CUDA_ERROR_ILLEGAL_ADDRESS", f.name(e))
	}
	if e := launch(n - 1); f.name(e) != "CUDA_ERROR_ILLEGAL_ADDRESS" {
		t.Errorf("a good launch after the fault: %s, want CUDA_ERROR_ILLEGAL_ADDRESS", f.name(e))
	}
	if err := d.LastDriverFault(); !errors.As(err, &fl) || fl.Kind != OutOfBounds || fl.Kernel != "scale" {
		t.Errorf("the sticky error's fault: %v", err)
	}
	if e := f.release(0); e != 0 {
		t.Fatalf("cuDevicePrimaryCtxRelease_v2: %d", e)
	}
	var ctx unsafe.Pointer
	if e := f.retain(&ctx, 0); e != 0 {
		t.Fatalf("cuDevicePrimaryCtxRetain: %d", e)
	}
	if f.memAlloc(&x, 4*n) != 0 || f.memAlloc(&y, 4*n) != 0 || f.htod(x, unsafe.Pointer(&host[0]), 4*n) != 0 {
		t.Fatal("a new context after the fault: cuMemAlloc_v2 or cuMemcpyHtoD_v2 failed")
	}
	if e := launch(n - 1); e != 0 {
		t.Errorf("a good launch in a new context: %s (%v)", f.name(e), d.LastDriverFault())
	}
	if d.LastDriverFault() != nil {
		t.Error("the destroyed context's fault is still reported")
	}
}

// graphDrv is the emulated driver's stream capture and graph calls.
type graphDrv struct {
	streamCreate func(s *unsafe.Pointer, flags uint32) int32
	streamSync   func(s unsafe.Pointer) int32
	begin        func(s unsafe.Pointer, mode int32) int32
	end          func(s unsafe.Pointer, g *unsafe.Pointer) int32
	instantiate  func(e *unsafe.Pointer, g unsafe.Pointer, flags uint64) int32
	update       func(e, g unsafe.Pointer, info *[3]uint64) int32
	launch       func(e, s unsafe.Pointer) int32
	destroy      func(g unsafe.Pointer) int32
	execDestroy  func(e unsafe.Pointer) int32
	hostAlloc    func(p *unsafe.Pointer, size uintptr, flags uint32) int32
	freeHost     func(p unsafe.Pointer) int32
	htodAsync    func(dst uint64, src unsafe.Pointer, n uintptr, s unsafe.Pointer) int32
	memsetAsync  func(dst uint64, v uint8, n uintptr, s unsafe.Pointer) int32
	lastNode     func() int32
}

// TestEmulatedDriverGraphs: a captured stream runs nothing; its graph,
// instantiated, replays the launches, memsets and copies (a copy reads the
// pinned memory as it is at the launch); an update changes parameters
// but not the nodes' kinds or kernels; a capture refuses a wait, an
// allocation outside relaxed mode and a copy from pageable memory, and
// then ends without a graph; a graph's fault names its node.
func TestEmulatedDriverGraphs(t *testing.T) {
	d, f := loadDriver(t)
	h, err := dynlib.Open(d.DriverLibrary(), dynlib.Local)
	if err != nil {
		t.Fatal(err)
	}
	var g graphDrv
	for _, r := range []struct {
		p    any
		name string
	}{
		{&g.streamCreate, "cuStreamCreate"}, {&g.streamSync, "cuStreamSynchronize"},
		{&g.begin, "cuStreamBeginCapture_v2"}, {&g.end, "cuStreamEndCapture"},
		{&g.instantiate, "cuGraphInstantiateWithFlags"}, {&g.update, "cuGraphExecUpdate_v2"}, {&g.launch, "cuGraphLaunch"},
		{&g.destroy, "cuGraphDestroy"}, {&g.execDestroy, "cuGraphExecDestroy"},
		{&g.hostAlloc, "cuMemHostAlloc"}, {&g.freeHost, "cuMemFreeHost"},
		{&g.htodAsync, "cuMemcpyHtoDAsync_v2"}, {&g.memsetAsync, "cuMemsetD8Async"},
		{&g.lastNode, "kbs_driver_last_graph_node"},
	} {
		purego.RegisterLibFunc(r.p, h, r.name)
	}
	text := []byte(`extern "C" __global__ void scale(const float* x, float* y, float s, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i <= n) y[i] = s * x[i];
}`)
	img, err := d.ModuleImage(Program{Dialect: CUDA, Main: Source{Name: "scale.cu", Text: text}}, Checked)
	if err != nil {
		t.Fatal(err)
	}
	var mod, fn, strm unsafe.Pointer
	if f.loadData(&mod, unsafe.Pointer(&img[0])) != 0 || f.getFunc(&fn, mod, "scale") != 0 || g.streamCreate(&strm, 0) != 0 {
		t.Fatal("loading the kernel or creating a stream failed")
	}
	const n = 256
	var x, y uint64
	if f.memAlloc(&x, 4*n) != 0 || f.memAlloc(&y, 4*n) != 0 {
		t.Fatal("cuMemAlloc_v2 failed")
	}
	defer f.memFree(x)
	defer f.memFree(y)
	var pin unsafe.Pointer
	if g.hostAlloc(&pin, 4*n, 0) != 0 {
		t.Fatal("cuMemHostAlloc failed")
	}
	defer g.freeHost(pin)
	host := unsafe.Slice((*float32)(pin), n)
	set := func(v float32) {
		for i := range host {
			host[i] = v * float32(i)
		}
	}
	yAt := func(i int) float32 {
		var v float32
		f.dtoh(unsafe.Pointer(&v), y+uint64(4*i), 4)
		return v
	}
	launch := func(s float32, count int32) int32 {
		params := []unsafe.Pointer{unsafe.Pointer(&x), unsafe.Pointer(&y), unsafe.Pointer(&s), unsafe.Pointer(&count)}
		return f.launch(fn, 2, 1, 1, n, 1, 1, 0, strm, unsafe.Pointer(&params[0]), nil)
	}
	// capture records work, failing with the driver error name of the
	// first call that fails.
	capture := func(mode int32, work func() int32) (unsafe.Pointer, string) {
		t.Helper()
		if e := g.begin(strm, mode); e != 0 {
			t.Fatalf("cuStreamBeginCapture_v2: %d", e)
		}
		e := work()
		var gr unsafe.Pointer
		if e2 := g.end(strm, &gr); e == 0 {
			e = e2
		}
		var s unsafe.Pointer
		f.errName(e, &s)
		return gr, goString(s)
	}
	const relaxed, global = 2, 0
	// y = 2x, x copied from pinned memory, in a graph.
	set(1)
	f.htod(y, unsafe.Pointer(&host[0]), 4*n) // y = 0, 1, 2, ...
	gr, e := capture(relaxed, func() int32 {
		if e := g.htodAsync(x, pin, 4*n, strm); e != 0 {
			return e
		}
		if e := g.memsetAsync(y, 0, 4*n, strm); e != 0 {
			return e
		}
		return launch(2, n-1)
	})
	if e != "CUDA_SUCCESS" || gr == nil {
		t.Fatalf("capture: %s", e)
	}
	if v := yAt(3); v != 3 {
		t.Errorf("y[3] = %v after the capture, want 3 (nothing run)", v)
	}
	var exec unsafe.Pointer
	if g.instantiate(&exec, gr, 0) != 0 {
		t.Fatal("cuGraphInstantiateWithFlags failed")
	}
	g.destroy(gr)
	defer g.execDestroy(exec)
	set(10) // the copy node reads the pinned memory at the launch
	if e := g.launch(exec, strm); e != 0 || yAt(3) != 60 {
		t.Errorf("cuGraphLaunch: %d, y[3] = %v, want 60", e, yAt(3))
	}
	// The same nodes with another scale: an update.
	gr, e = capture(relaxed, func() int32 {
		g.htodAsync(x, pin, 4*n, strm)
		g.memsetAsync(y, 0, 4*n, strm)
		return launch(3, n-1)
	})
	var info [3]uint64
	if e != "CUDA_SUCCESS" || g.update(exec, gr, &info) != 0 || info[0] != 0 {
		t.Errorf("updating with another scale: capture %s, result %d", e, info[0])
	}
	g.destroy(gr)
	if e := g.launch(exec, strm); e != 0 || yAt(3) != 90 {
		t.Errorf("the updated graph: %d, y[3] = %v, want 90", e, yAt(3))
	}
	// One node fewer: the update fails (topology changed, 2) and the
	// graph is unchanged.
	gr, _ = capture(relaxed, func() int32 { return launch(4, n-1) })
	if r := g.update(exec, gr, &info); r != 910 || info[0] != 2 {
		t.Errorf("update with another topology: %d, result %d; want 910, 2", r, info[0])
	}
	g.destroy(gr)
	if g.launch(exec, strm); yAt(3) != 90 {
		t.Errorf("after a failed update y[3] = %v, want 90", yAt(3))
	}
	// What a capture refuses.
	var p uint64
	for _, tc := range []struct {
		name string
		mode int32
		work func() int32
	}{
		{"a wait", relaxed, func() int32 { return g.streamSync(strm) }},
		{"a copy from pageable memory", relaxed, func() int32 {
			v := make([]float32, n)
			return g.htodAsync(x, unsafe.Pointer(&v[0]), 4*n, strm)
		}},
		{"an allocation in global mode", global, func() int32 { return f.memAlloc(&p, 64) }},
	} {
		gr, e := capture(tc.mode, tc.work)
		if e != "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED" || gr != nil {
			t.Errorf("%s in a capture: %s, graph %v; want CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and none", tc.name, e, gr)
		}
	}
	if gr, e := capture(relaxed, func() int32 { return f.memAlloc(&p, 64) }); e != "CUDA_SUCCESS" {
		t.Errorf("an allocation in relaxed mode: %s", e)
	} else {
		g.destroy(gr)
		f.memFree(p)
	}
	// A fault in the graph's second node.
	gr, _ = capture(relaxed, func() int32 {
		g.memsetAsync(y, 0, 4*n, strm)
		return launch(2, n)
	})
	var bad unsafe.Pointer
	g.instantiate(&bad, gr, 0)
	g.destroy(gr)
	defer g.execDestroy(bad)
	var name unsafe.Pointer
	f.errName(g.launch(bad, strm), &name)
	if goString(name) != "CUDA_ERROR_ILLEGAL_ADDRESS" || g.lastNode() != 1 {
		t.Errorf("faulty graph: %s, node %d; want CUDA_ERROR_ILLEGAL_ADDRESS at node 1", goString(name), g.lastNode())
	}
	var fl *Fault
	if err := d.LastDriverFault(); !errors.As(err, &fl) || fl.Kernel != "scale" {
		t.Errorf("the graph's fault: %v", err)
	}
}
