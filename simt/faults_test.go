package simt

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The fault tests: each kernel of testdata/faults.cu has one bug, which
// the launch must report as a *Fault of the right kind, naming the
// kernel and the place.

func fault(t *testing.T, err error, kind FaultKind, contains ...string) *Fault {
	t.Helper()
	var f *Fault
	if !errors.As(err, &f) {
		t.Fatalf("want a %v fault, got %v", kind, err)
	}
	if f.Kind != kind {
		t.Fatalf("want a %v fault, got %v: %v", kind, f.Kind, err)
	}
	if !errors.Is(err, &Fault{Kind: kind}) {
		t.Errorf("errors.Is does not match the fault kind")
	}
	for _, s := range contains {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("fault message lacks %q: %v", s, err)
		}
	}
	return f
}

func TestFaultMissingBarrierRace(t *testing.T) {
	k := kernel(t, load(t, "faults.cu", Checked), "sum_no_barrier")
	x := make([]float32, 128)
	out := alloc(t, 4)
	st, err := k.Launch(Launch{Grid: d1(1), Block: d1(128), Args: []any{f32Buf(t, x), out}})
	f := fault(t, err, Race, "sum_no_barrier", "shared variable buf of sum_no_barrier", "faults.cu:7 (write)", "faults.cu:9 (read)")
	if len(f.Threads) != 2 || f.Threads[0] == f.Threads[1] {
		t.Errorf("race threads %v: want two different threads", f.Threads)
	}
	if st.Races == 0 || f.Races != st.Races {
		t.Errorf("race count %d in stats, %d in fault", st.Races, f.Races)
	}
	if st.Blocks != 1 {
		t.Errorf("a race lets the launch finish: ran %d blocks", st.Blocks)
	}
}

func TestFaultRacingWrite(t *testing.T) {
	k := kernel(t, load(t, "faults.cu", Checked), "racing_write")
	out := alloc(t, 4*64)
	_, err := k.Launch(Launch{Grid: d1(1), Block: d1(64), Args: []any{out}})
	fault(t, err, Race, "write by thread", "and write by thread", "shared variable last of racing_write", "faults.cu:18 (write)")
}

func TestFaultWarpExchangeWithoutSyncwarp(t *testing.T) {
	k := kernel(t, load(t, "faults.cu", Checked), "warp_no_sync")
	out := alloc(t, 4*32)
	_, err := k.Launch(Launch{Grid: d1(1), Block: d1(32), Args: []any{out}})
	fault(t, err, Race, "warp_no_sync", "faults.cu:26 (write)", "faults.cu:27 (read)")
}

func TestFastModeDoesNotCheckMemory(t *testing.T) {
	k := kernel(t, load(t, "faults.cu", Fast), "sum_no_barrier")
	out := alloc(t, 4)
	st, err := k.Launch(Launch{Grid: d1(1), Block: d1(128), Args: []any{f32Buf(t, make([]float32, 128)), out}})
	if err != nil || st.Accesses != 0 || st.Races != 0 {
		t.Errorf("fast mode: err %v, %d accesses checked, %d races; want no checks", err, st.Accesses, st.Races)
	}
}

func TestFaultDivergentBarrier(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "faults.cu", m), "divergent_barrier")
		_, err := k.Launch(Launch{Grid: d1(1), Block: d1(32), Args: []any{alloc(t, 4*32)}})
		fault(t, err, DivergentBarrier, "divergent_barrier", "__syncthreads at faults.cu:33", "threads 0-15 wait at __syncthreads (faults.cu:33)", "threads 16-31 have exited")
	})
}

func TestFaultExitBeforeBarrier(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "faults.cu", m), "exit_then_barrier")
		_, err := k.Launch(Launch{Grid: d1(1), Block: d1(64), Args: []any{alloc(t, 4*64), 40}})
		fault(t, err, DivergentBarrier, "exit_then_barrier", "faults.cu:41", "threads 40-63 have exited")
	})
}

func TestFaultOffByOneStore(t *testing.T) {
	k := kernel(t, load(t, "faults.cu", Checked), "off_by_one")
	const n = 64
	out := alloc(t, 4*n)
	out.Label = "out"
	_, err := k.Launch(Launch{Grid: d1(1), Block: d1(128), Args: []any{out, n}})
	f := fault(t, err, OutOfBounds, "out-of-bounds write of 4 bytes", "byte offset 256 of a 256-byte buffer", `buffer "out"`, "faults.cu:48 (write)")
	if f.Buffer != out || f.Offset != 4*n || len(f.Threads) != 1 || f.Threads[0] != (Dim3{n, 0, 0}) {
		t.Errorf("fault at buffer %p offset %d threads %v; want %p, %d, thread (%d,0,0)", f.Buffer, f.Offset, f.Threads, out, 4*n, n)
	}
	for i, v := range f32s(out) {
		if v != 2 {
			t.Fatalf("out[%d] = %v: threads before the faulty one must have written", i, v)
		}
	}
}

func TestFaultSharedArrayOverrun(t *testing.T) {
	k := kernel(t, load(t, "faults.cu", Checked), "shared_overrun")
	_, err := k.Launch(Launch{Grid: d1(1), Block: d1(32), Args: []any{alloc(t, 4*32)}})
	f := fault(t, err, OutOfBounds, "out-of-bounds shared-memory write of 4 bytes", "shared_overrun", "thread (31,0,0)",
		"byte 128 of shared array a of shared_overrun, which has 128 bytes", "faults.cu:96 (write)")
	if f.Buffer != nil {
		t.Errorf("a shared-memory fault names buffer %v", f.Buffer)
	}
}

func TestFaultDynamicSharedOverrun(t *testing.T) {
	k := kernel(t, load(t, "faults.cu", Checked), "dyn_overrun")
	_, err := k.Launch(Launch{Grid: d1(1), Block: d1(32), SharedBytes: 4 * 32, Args: []any{alloc(t, 4*32)}})
	fault(t, err, OutOfBounds, "dynamic shared-memory read", "offset 128", "the launch gave 128 bytes", "faults.cu:56 (read)")
}

func TestFaultShuffleWithExitedLane(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "faults.cu", m), "shfl_exited")
		_, err := k.Launch(Launch{Grid: d1(1), Block: d1(32), Args: []any{alloc(t, 4*32)}})
		fault(t, err, WarpMisuse, "__shfl_down_sync", "faults.cu:62", "lane 5")
	})
}

func TestFaultShuffleAgainstBarrierDeadlock(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "faults.cu", m), "shfl_vs_barrier")
		_, err := k.Launch(Launch{Grid: d1(1), Block: d1(32), Args: []any{alloc(t, 4*32)}})
		fault(t, err, Deadlock, "shfl_vs_barrier", "threads 0-15 wait at __shfl_xor_sync (faults.cu:68)", "threads 16-31 wait at __syncthreads (faults.cu:69)")
	})
}

func TestFaultSpinTimesOut(t *testing.T) {
	k := kernel(t, load(t, "faults.cu", Checked), "spin")
	_, err := k.Launch(Launch{Grid: d1(1), Block: d1(32), Timeout: 200 * time.Millisecond, Args: []any{alloc(t, 4)}})
	fault(t, err, Timeout, "spin", "time limit")
}

func TestFaultNullPointer(t *testing.T) {
	k := kernel(t, load(t, "faults.cu", Checked), "copy")
	_, err := k.Launch(Launch{Grid: d1(1), Block: d1(32), Args: []any{uint64(0), alloc(t, 4*32)}})
	fault(t, err, NullPointer, "null pointer read", "copy")
}

func TestFaultAssert(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "faults.cu", m), "assert_fails")
		_, err := k.Launch(Launch{Grid: d1(2), Block: d1(64), Args: []any{40}})
		fault(t, err, Trap, "assertion failed: (int)threadIdx.x < n", "faults.cu:81", "thread (40,0,0)")
	})
}

func TestFaultStackOverflow(t *testing.T) {
	k := kernel(t, load(t, "faults.cu", Checked), "deep")
	_, err := k.Launch(Launch{Grid: d1(1), Block: d1(32), Args: []any{alloc(t, 4*32), 100000}})
	fault(t, err, StackOverflow, "deep", "overflows its 128 KiB stack")
}

func TestBadLaunches(t *testing.T) {
	m := load(t, "faults.cu", Fast)
	k := kernel(t, m, "off_by_one")
	out := alloc(t, 64)
	for _, tc := range []struct {
		name string
		l    Launch
		want string
	}{
		{"too many threads", Launch{Grid: d1(1), Block: d1(2048), Args: []any{out, 1}}, "more than 1024"},
		{"empty grid", Launch{Grid: Dim3{0, 1, 1}, Block: d1(32), Args: []any{out, 1}}, "empty grid"},
		{"missing argument", Launch{Grid: d1(1), Block: d1(32), Args: []any{out}}, "takes 2 arguments (float* out, int n)"},
		{"wrong size", Launch{Grid: d1(1), Block: d1(32), Args: []any{out, int64(1)}}, "argument 1 (int n) is 8 bytes, the parameter is 4"},
		{"bad type", Launch{Grid: d1(1), Block: d1(32), Args: []any{out, "1"}}, "unsupported argument type string"},
		{"offset out of range", Launch{Grid: d1(1), Block: d1(32), Args: []any{out.At(65), 1}}, "offset 65 outside a 64-byte buffer"},
		{"too much shared memory", Launch{Grid: d1(1), Block: d1(32), SharedBytes: 1 << 20, Args: []any{out, 1}}, "dynamic shared memory"},
		{"metal bindings", Launch{Grid: d1(1), Block: d1(32), Buffers: []Binding{{Index: 0, Buf: out}}}, "Buffers and Threadgroup are for Metal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := k.Launch(tc.l)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := m.Kernel("nope"); err == nil || !strings.Contains(err.Error(), "off_by_one") {
		t.Errorf("unknown kernel: %v, want the list of kernels", err)
	}
}

// TestTemplateSharedIsPerModule: a static __shared__ array of a template
// device function belongs to each module that instantiates it, so the
// checks watch it in every module, not only the first one loaded.
func TestTemplateSharedIsPerModule(t *testing.T) {
	d := device(t)
	src := `template <int N> __device__ void fill(int* out) {
	__shared__ int s[N];
	s[threadIdx.x] = threadIdx.x;
	out[threadIdx.x] = s[N - 1 - threadIdx.x];
}
extern "C" __global__ void racy(int* out) { fill<32>(out); }
`
	for i := 0; i < 2; i++ {
		text := src + fmt.Sprintf("// module %d\n", i)
		m, err := d.Load(Program{Dialect: CUDA, Main: Source{Name: "tmpl.cu", Text: []byte(text)}}, Checked)
		if err != nil {
			t.Fatal(err)
		}
		_, err = kernel(t, m, "racy").Launch(Launch{Grid: d1(1), Block: d1(32), Args: []any{alloc(t, 4*32)}})
		fault(t, err, Race, "shared variable s of fill<32>")
	}
}

// TestFaultGlobalRace: conflicting accesses of device memory by threads
// of one launch that nothing orders are races; same-value stores,
// barrier-ordered accesses, neighbouring bytes, atomics, fence-published
// results and separate launches are not.
func TestFaultGlobalRace(t *testing.T) {
	mod := load(t, "faults.cu", Checked)
	for _, tc := range []struct {
		kernel string
		grid   uint32
		args   func() []any
		want   []string
	}{
		{"global_ww_blocks", 2, func() []any { return []any{alloc(t, 4)} },
			[]string{"global-memory race in kernel global_ww_blocks", "write by thread (0,0,0) of block (0,0,0) and write by thread (0,0,0) of block (1,0,0)", "byte offset 0 of a 4-byte buffer", "faults.cu:"}},
		{"global_ww_threads", 1, func() []any { return []any{alloc(t, 4)} },
			[]string{"write by thread (0,0,0) of block (0,0,0) and write by thread (1,0,0) of block (0,0,0)"}},
		{"global_rw_blocks", 2, func() []any { return []any{alloc(t, 8), alloc(t, 4)} },
			[]string{"global-memory race in kernel global_rw_blocks", "byte offset 4 of a 8-byte buffer"}},
	} {
		t.Run(tc.kernel, func(t *testing.T) {
			_, err := kernel(t, mod, tc.kernel).Launch(Launch{Grid: d1(tc.grid), Block: d1(32), Args: tc.args(), Workers: 1})
			f := fault(t, err, Race, tc.want...)
			if f.Buffer == nil {
				t.Errorf("the fault names no buffer")
			}
		})
	}
	t.Run("benign", func(t *testing.T) {
		const blocks, threads = 4, 64
		out := alloc(t, 4*blocks*threads)
		_, err := kernel(t, mod, "global_benign").Launch(Launch{Grid: d1(blocks), Block: d1(threads),
			Args: []any{alloc(t, 4), alloc(t, 4*blocks), alloc(t, blocks*threads), alloc(t, 4), out}})
		if err != nil {
			t.Fatal(err)
		}
		if got := u32s(out); got[threads*3+5] != 8 {
			t.Errorf("out = %v", got[threads*3+5])
		}
	})
	t.Run("last_block", func(t *testing.T) {
		out := alloc(t, 4)
		_, err := kernel(t, mod, "global_last_block").Launch(Launch{Grid: d1(8), Block: d1(32), Args: []any{alloc(t, 32), alloc(t, 4), out}})
		if err != nil {
			t.Fatal(err)
		}
		if got := f32s(out)[0]; got != 36 {
			t.Errorf("sum %v, want 36", got)
		}
	})
	t.Run("separate_launches", func(t *testing.T) {
		out := alloc(t, 4)
		k := kernel(t, mod, "store_first")
		for i := int32(1); i <= 2; i++ {
			if _, err := k.Launch(Launch{Grid: d1(2), Block: d1(32), Args: []any{out, i}}); err != nil {
				t.Fatal(err)
			}
		}
		if got := u32s(out)[0]; got != 2 {
			t.Errorf("out %d, want 2", got)
		}
	})
}

func TestFaultCpAsyncReadBeforeWait(t *testing.T) {
	src := make([]float32, 256)
	for _, tc := range []struct {
		kernel   string
		contains []string
	}{
		// wait_group 1 lets the older group go, not the newer one.
		{"cp_async_early_read", []string{"cp.async write by thread", "and read by thread", "before the copy's cp.async.wait_group",
			"shared variable new_tile of cp_async_early_read", "faults.cu:166 (write)", "faults.cu:170 (read)"}},
		// The issuing thread itself may not read before its wait.
		{"cp_async_own_read", []string{"cp.async write by thread (0,0,0) and read by thread (0,0,0)", "shared variable tile of cp_async_own_read",
			"faults.cu:177 (write)", "faults.cu:179 (read)"}},
	} {
		t.Run(tc.kernel, func(t *testing.T) {
			k := kernel(t, load(t, "faults.cu", Checked), tc.kernel)
			_, err := k.Launch(Launch{Grid: d1(1), Block: d1(32), Args: []any{f32Buf(t, src), alloc(t, 4*32)}})
			fault(t, err, Race, tc.contains...)
		})
	}
}

func TestFaultCpAsyncMisaligned(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "faults.cu", m), "cp_async_misaligned")
		_, err := k.Launch(Launch{Grid: d1(1), Block: d1(32), Args: []any{f32Buf(t, make([]float32, 128)), alloc(t, 4*32)}})
		f := fault(t, err, Misaligned, "misaligned address: cp.async destination of 16 bytes", "4 bytes past a multiple of 16", "in kernel cp_async_misaligned at faults.cu:187")
		if f.Width != 16 || f.Addr%16 != 4 {
			t.Errorf("fault at %#x, width %d: want 4 bytes past a 16-byte boundary, width 16", f.Addr, f.Width)
		}
	})
}

// TestFaultMisalignedVector: a kernel's misaligned 16-byte load, 8-byte
// store and 4-byte load are each a misaligned-address fault naming the
// kernel, the address and the alignment, in both modes (every access
// through a pointer tests its address), never a crash of the process or
// a silent pass.
func TestFaultMisalignedVector(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		mod := load(t, "faults.cu", m)
		src := f32Buf(t, make([]float32, 256))
		_, err := kernel(t, mod, "misaligned_ld16").Launch(Launch{Grid: d1(1), Block: d1(32), Args: []any{src, alloc(t, 4*32)}})
		f := fault(t, err, Misaligned, "misaligned address: load of", "int4", "8 bytes past a multiple of 16", "in kernel misaligned_ld16 at faults.cu:196")
		if f.Width != 16 || f.Addr%16 != 8 || f.Addr < src.Addr() || f.Addr >= src.Addr()+1024 {
			t.Errorf("fault at %#x, width %d: want 8 bytes past a 16-byte boundary in the source (%#x), width 16", f.Addr, f.Width, src.Addr())
		}
		_, err = kernel(t, mod, "misaligned_st8").Launch(Launch{Grid: d1(1), Block: d1(32), Args: []any{alloc(t, 4*64), int32(0)}})
		f = fault(t, err, Misaligned, "misaligned address: ", "int2", "4 bytes past a multiple of 8", "faults.cu:205")
		if f.Width != 8 {
			t.Errorf("the 8-byte store's fault names width %d", f.Width)
		}
		_, err = kernel(t, mod, "misaligned_st8").Launch(Launch{Grid: d1(1), Block: d1(32), Args: []any{alloc(t, 4*64), int32(1)}})
		fault(t, err, Misaligned, "misaligned address: load of", "2 bytes past a multiple of 4", "faults.cu:207")
	})
}
