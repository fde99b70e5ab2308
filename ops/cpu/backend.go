package cpu

import (
	"fmt"
	"sync"

	"github.com/kernbench/kernbench/ops"
)

// Backend computes ops on the CPU with a pool of worker threads. Compute
// may be called from several goroutines; calls on one backend run one at
// a time, each using all its threads.
type Backend struct {
	pool *pool
	tier Tier
	// kern is the tier's kernel set, read by the matrix kernels.
	kern *kernelSet

	mu      sync.Mutex // serializes Compute; guards the fields below
	scratch scratch
	// Reusable parallel jobs of the hot kernels.
	mm   mulMatJob
	act  actJob
	gj   gemmJob
	sg   sgemmJob
	sgp  sgemmPackJob
	sgb  sgemmBF16Job
	sgbp sgemmBF16PackJob
	pk   packJob
	sm   softmaxJob
	elt  eltJob
	gr   getRowsJob
	cpy  cpyRowsJob
	same cpySameJob
	// rope, ssm and ssmConv are ROPE's, SSM_SCAN's and SSM_CONV's.
	rope    ropeJob
	ssm     ssmJob
	ssmConv ssmConvJob
	rms     rmsNormJob
	fa      flashAttnJob
	// mmid is MUL_MAT_ID's job, with its grouping buffers.
	mmid mulMatIDJob
	// idg holds MUL_MAT_ID by expert's gathered rows (mul_mat_id_gemm.go).
	idg idGemm
	// tuned are the tunable parameters' values (tuned.go).
	tuned tunedParams
	// repack turns on the repacked weight copies, held in x8
	// (mul_mat_x8.go).
	repack bool
	x8     x8Cache
	// l2Bytes and llcBytes are the threads' L2 caches together and the
	// last level cache, which pick the elementwise ops' kernels
	// (Backend.reach).
	l2Bytes, llcBytes int64
}

// New returns a CPU backend using threads workers (GOMAXPROCS when
// threads <= 0) and the default tier: the one $KERNBENCH_CPU names, else
// the fastest the CPU supports. A $KERNBENCH_CPU naming an unknown tier or
// one this CPU lacks is an error naming the tier, as is a $KERNBENCH_SPIN
// that is not a duration. Close the backend to stop the workers.
func New(threads int) (*Backend, error) {
	return NewWithOptions(Options{Threads: threads})
}

// NewWithOptions returns a CPU backend configured by o; an unknown tier or
// one the CPU lacks is an error.
func NewWithOptions(o Options) (*Backend, error) {
	t, err := resolveTier(o.Tier)
	if err != nil {
		return nil, err
	}
	spin, err := resolveSpin(o.Spin)
	if err != nil {
		return nil, err
	}
	tp, err := resolveTuned(o.Tuned)
	if err != nil {
		return nil, err
	}
	repack, err := resolveRepack(o.NoRepack)
	if err != nil {
		return nil, err
	}
	p := newPool(o.Threads, spin)
	// The kernel swaps of the core-dependent parameters, read once here.
	kern := t.kernels.tuned(tp.values)
	b := &Backend{pool: p, tier: t.Tier, kern: kern, tuned: tp, repack: repack}
	b.l2Bytes, b.llcBytes = cacheSizes(p.threads)
	b.scratch.workers = make([]workerBuf, p.threads)
	b.scratch.quad = make([]quadOut, p.threads)
	return b, nil
}

// Name returns "cpu".
func (b *Backend) Name() string { return "cpu" }

// Tier returns the kernel tier the backend runs.
func (b *Backend) Tier() Tier { return b.tier }

// Threads returns the number of worker threads.
func (b *Backend) Threads() int { return b.pool.threads }

// Describe says what the backend runs, for reports: "cpu (tier avx2, 2
// threads)".
func (b *Backend) Describe() string {
	return fmt.Sprintf("cpu (tier %s, %d threads)", b.tier.Name, b.pool.threads)
}

// Alloc returns a zeroed host buffer. Its whole huge pages are advised
// as such (adviseHugeInside): a kernel streaming a large weight matrix
// from memory then takes fewer TLB misses, and the hardware prefetchers,
// which stop at page boundaries, run on.
func (b *Backend) Alloc(size int64) (ops.Buffer, error) {
	buf, err := ops.NewHostBuffer(size)
	if err != nil {
		return nil, err
	}
	adviseHugeInside(buf.Bytes())
	return buf, nil
}

// Close stops the worker threads and frees the repacked weight copies.
func (b *Backend) Close() error {
	b.pool.close()
	b.mu.Lock()
	b.x8.drop()
	b.mu.Unlock()
	return nil
}

// kernel is one op's implementation: supports says whether it handles a
// node's types and strides, compute fills the node.
type kernel struct {
	supports func(t *ops.Tensor) error
	compute  func(b *Backend, t *ops.Tensor) error
}

var kernels = map[ops.Op]kernel{}

// addKernel installs the kernel for op; each op's file calls it from init.
func addKernel(op ops.Op, supports func(t *ops.Tensor) error, compute func(b *Backend, t *ops.Tensor) error) {
	if _, dup := kernels[op]; dup {
		panic("cpu: two kernels added for " + op.String())
	}
	kernels[op] = kernel{supports: supports, compute: compute}
}

// Supports reports whether the backend can compute t.
func (b *Backend) Supports(t *ops.Tensor) error {
	if t.Op == ops.OpNone || t.Op.IsView() {
		return nil
	}
	k, ok := kernels[t.Op]
	if !ok {
		return fmt.Errorf("cpu: no kernel for %v", t.Op)
	}
	if k.supports == nil {
		return nil
	}
	if err := k.supports(t); err != nil {
		return fmt.Errorf("cpu: %v: %w", t.Op, err)
	}
	return nil
}

// Compute computes t into its storage. Views and leaves need no work.
func (b *Backend) Compute(t *ops.Tensor) error {
	if t.Op == ops.OpNone || t.Op.IsView() {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// A node computed again (a reused graph) skips the checks, and
	// their allocations, when nothing they read has changed.
	if !b.passedChecks(t) {
		if err := b.Supports(t); err != nil {
			return err
		}
		b.rememberChecks(t)
	}
	if err := hostCheck(t); err != nil {
		return err
	}
	err := kernels[t.Op].compute(b, t)
	// Computing into a buffer of weights makes its copies stale.
	touchWeights(t)
	if err != nil {
		return fmt.Errorf("cpu: %v %s: %w", t.Op, t.Label(), err)
	}
	return nil
}

// hostCheck makes sure t and its sources live in host memory with their
// whole extent inside their buffers, so kernels can index without checks
// failing at run time.
func hostCheck(t *ops.Tensor) error {
	// The destination must be writable: computing into a read-only
	// mapping (a GGUF weight) would fault.
	if _, err := t.WritableHostBytes(); err != nil {
		return err
	}
	for _, s := range t.Src {
		if s == nil {
			continue
		}
		if _, err := s.HostBytes(); err != nil {
			return err
		}
	}
	return nil
}
