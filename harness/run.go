package harness

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/reference"
)

// Run computes case c on backend be and compares the output with the
// float64 reference. It never panics on a case or backend that does (in the
// calling goroutine): the panic becomes a failed result.
func Run(be ops.Backend, c Case) Result { return run(be, c, runOptions{}) }

// KernelBuildReason is a failed result's Reason when the backend could not
// build or load the node's kernels (its error wraps ops.ErrKernelBuild):
// the cause is in Err, and no kernel ran.
const KernelBuildReason = "kernels not built or loaded (not a kernel result)"

// DryRunReason is the error of every case run on a backend that runs dry
// (ops.IsDryRun): it computes nothing, so nothing is validated.
const DryRunReason = "the backend runs dry (computes nothing: KERNBENCH_CUDA_EMU_EXEC=off), so its results are not validated"

// runOptions adapt run to benchmarking (see Prepare); the zero value is
// Run's behaviour.
type runOptions struct {
	// cache, when set, keeps the case's drawn inputs and reference output
	// for later runs of the same case on other backends.
	cache *pointCache
	// skipReference, when set and true for the built node, leaves out the
	// comparison with the reference (too costly for the node): the node is
	// still computed once and checked for memory safety, and the result
	// is StatusSkipped with reason unvalidatedReason.
	skipReference func(node *ops.Tensor) bool
	// sample, when set, validates a node whose reference was skipped on
	// a sample of its outputs where the op allows it (sampled.go).
	sample bool
	// keep, when set, receives the node and its builder once the case has
	// passed (or computed safely, unvalidated), so it can be timed.
	keep func(node *ops.Tensor, b *Builder)
	// weights marks the weight operand's buffer as holding weights
	// (markWeights).
	weights bool
}

// HasWeights reports whether op has a weight operand that
// PrepareOptions.Weights marks: source 0 of MUL_MAT and MUL_MAT_ID.
func HasWeights(op ops.Op) bool { return op == ops.OpMulMat || op == ops.OpMulMatID }

// markWeights marks the host buffer of node's weight operand (source 0
// of MUL_MAT and MUL_MAT_ID) as holding weights, as a GGUF file's buffer
// is (ops.HostBuffer.MarkWeights), so that a backend may keep a derived
// copy of them, as it does for a model's: the CPU's repacked x8 decode
// path. Other ops and device buffers are left as they are.
func markWeights(node *ops.Tensor) {
	if !HasWeights(node.Op) {
		return
	}
	if hb, ok := owner(node.Src[0]).Buffer.(*ops.HostBuffer); ok {
		hb.MarkWeights()
	}
}

// unvalidatedReason is the reason of a result whose reference comparison
// was skipped.
const unvalidatedReason = "unvalidated: float64 reference skipped as too costly"

func run(be ops.Backend, c Case, o runOptions) (res Result) {
	res = Result{
		Op: c.Op, OpName: c.Op.String(), Case: c.Name, Types: c.TypeString(),
		Backend: be.Name(), NMSE: Metric(math.NaN()), MaxErr: Metric(math.NaN()), RefMax: Metric(math.NaN()),
	}
	defer func() {
		if p := recover(); p != nil {
			res.fail("panic: %v", p)
		}
	}()
	if ops.IsDryRun(be) {
		res.fail("dry run")
		res.Err = DryRunReason
		return res
	}
	var tol Tolerance
	if c.Expect == ExpectMatch {
		var err error
		if tol, err = LookupTolerance(c.Op, primaryType(c), c.Tag); err != nil {
			res.fail("no tolerance")
			res.Err = res.noteErr(err)
			return res
		}
		res.Tol = tol
	}

	b := newBuilder(be, c.seed())
	b.cache = o.cache
	node, err := build(c, b)
	res.Inputs = b.inputs()
	if c.Expect == ExpectRefuse {
		switch {
		case err == nil:
			res.fail("built a node the op must refuse: %v", node)
		case errors.Is(err, ops.ErrShape) || errors.Is(err, quant.ErrRowLength):
			res.Status = StatusRefused
			res.Err = res.noteErr(err)
		default:
			res.fail("refused with an error that wraps neither ops.ErrShape nor quant.ErrRowLength")
			res.Err = res.noteErr(err)
		}
		return res
	}
	if err != nil {
		res.fail("build")
		res.Err = res.noteErr(err)
		return res
	}
	if err := singleOp(node); err != nil {
		res.fail("bad case")
		res.Err = res.noteErr(err)
		return res
	}
	if err := be.Supports(node); err != nil {
		res.Status = StatusSkipped
		res.Reason = "unsupported"
		res.Err = res.noteErr(err)
		return res
	}
	if err := allocOutput(be, node); err != nil {
		res.fail("alloc output")
		res.Err = res.noteErr(err)
		return res
	}
	if o.weights {
		markWeights(node)
	}

	skipRef := c.Expect == ExpectMatch && o.skipReference != nil && o.skipReference(node)
	var want []float64
	if c.Expect == ExpectMatch && !skipRef && o.cache.reference() != nil {
		want = o.cache.reference()
	} else if c.Expect == ExpectMatch && !skipRef {
		want, err = reference.Compute(node)
		if err != nil {
			res.fail("reference failed")
			res.Err = res.noteErr(err)
			return res
		}
		if int64(len(want)) != node.NumElements() {
			res.fail("reference returned %d values for %d elements", len(want), node.NumElements())
			return res
		}
		if want, err = expected(node, want); err != nil {
			res.fail("expected values")
			res.Err = res.noteErr(err)
			return res
		}
		o.cache.setReference(want)
	}

	start := time.Now()
	cerr := be.Compute(node)
	res.Compute = time.Since(start)

	// A lost device context (a sticky fault) comes first: nothing can be
	// read back to check, and the node's error names the fault.
	if cerr != nil && errors.Is(cerr, ops.ErrContextLost) {
		res.fail("compute")
		res.Err = res.noteErr(cerr)
		return res
	}
	// Memory safety comes next: a kernel that wrote out of bounds fails
	// whatever it computed, and whether or not it returned an error.
	if reason, err := checkMemory(b, node); err != nil {
		res.fail("read back")
		res.Err = res.noteErr(err)
		return res
	} else if reason != "" {
		res.fail("%s", reason)
		if cerr != nil {
			res.Err = res.noteErr(cerr)
		}
		return res
	}

	if c.Expect == ExpectReject {
		if cerr == nil {
			res.fail("computed input the op must reject")
			return res
		}
		res.Status = StatusRejected
		res.Err = res.noteErr(cerr)
		return res
	}
	if cerr != nil {
		if errors.Is(cerr, ops.ErrKernelBuild) {
			// Not the kernel's result: it never ran.
			res.fail("%s", KernelBuildReason)
		} else {
			res.fail("compute")
		}
		res.Err = res.noteErr(cerr)
		return res
	}
	if skipRef && o.sample {
		idx, want, ok, err := sampledReference(node, c.seed())
		if err != nil {
			res.fail("sampled reference")
			res.Err = res.noteErr(err)
			return res
		}
		if ok {
			return judgeSample(node, b, tol, idx, want, res, o)
		}
	}
	if skipRef {
		res.Status = StatusSkipped
		res.Reason = unvalidatedReason
		if o.keep != nil {
			o.keep(node, b)
		}
		return res
	}

	got, err := reference.Read(node)
	if err != nil {
		res.fail("read output")
		res.Err = res.noteErr(err)
		return res
	}
	if len(got) != len(want) {
		res.fail("output has %d values, reference %d", len(got), len(want))
		return res
	}
	if reason := res.judge(tol, node.Ne, got, want); reason != "" {
		res.fail("%s", reason)
		return res
	}
	if c.Check != nil {
		if err := c.Check(got); err != nil {
			res.fail("%v", err)
			return res
		}
	}
	res.Status = StatusOK
	if o.keep != nil {
		o.keep(node, b)
	}
	return res
}

// build runs c.Build, preferring the builder's first error.
func build(c Case, b *Builder) (*ops.Tensor, error) {
	if c.Build == nil {
		return nil, fmt.Errorf("harness: case %s has no Build", c.ID())
	}
	b.plants, b.used = c.Plants, make([]bool, len(c.Plants))
	node, err := c.Build(b)
	if b.Err() != nil {
		return nil, b.Err()
	}
	if err != nil {
		return nil, err
	}
	if err := b.unusedPlant(); err != nil {
		return nil, err
	}
	if node == nil {
		return nil, fmt.Errorf("harness: case %s built no node", c.ID())
	}
	return node, nil
}

// primaryType is the type a case's tolerance is looked up by.
func primaryType(c Case) quant.Type {
	if len(c.Types) == 0 {
		return AnyType
	}
	return c.Types[0]
}

// singleOp checks that node is one op over leaves (or views of leaves):
// Run computes one node, not a graph.
func singleOp(node *ops.Tensor) error {
	if node.Op == ops.OpNone || node.Op.IsView() {
		return fmt.Errorf("harness: node %s computes nothing (op %v)", node.Label(), node.Op)
	}
	for i, s := range node.Src {
		if s == nil {
			continue
		}
		if o := owner(s); o.Op != ops.OpNone {
			return fmt.Errorf("harness: source %d of %s is computed by %v; a case is one op over leaves", i, node.Label(), o.Op)
		}
	}
	if node.ViewOf != nil && owner(node).Op != ops.OpNone {
		return fmt.Errorf("harness: %s writes into a computed tensor", node.Label())
	}
	return nil
}

// allocOutput gives node storage with guard bytes (guardFor(be)),
// poisoned with 0xFF so that elements a kernel leaves unwritten read as
// NaN (or -1). A node that writes into a leaf (CPY) uses the leaf's
// storage and guards.
func allocOutput(be ops.Backend, node *ops.Tensor) error {
	if node.ViewOf != nil {
		return nil
	}
	guard := guardFor(be)
	if err := ops.AllocTensor(be, node, guard); err != nil {
		return fmt.Errorf("harness: alloc %s (%d bytes): %w", node.Label(), node.Extent()+guard, err)
	}
	if err := writeGuarded(node, poisonBytes(node.Extent()), guard); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	return nil
}

// checkMemory returns a failure reason when the backend wrote past the end
// of the output or of any leaf, or changed an input; err reports a failure
// to read the memory back.
func checkMemory(b *Builder, node *ops.Tensor) (string, error) {
	if node.ViewOf == nil {
		n, err := guardDamage(node, b.guard)
		if err != nil {
			return "", err
		}
		if n > 0 {
			return fmt.Sprintf("out-of-bounds write: %d of %d guard bytes past the output changed", n, guardBytes), nil
		}
	}
	dst := owner(node)
	for _, l := range b.leaves {
		n, err := guardDamage(l.t, b.guard)
		if err != nil {
			return "", err
		}
		if n > 0 {
			return fmt.Sprintf("out-of-bounds write: %d of %d guard bytes past %s changed", n, guardBytes, l.t.Name), nil
		}
		var written *ops.Tensor
		if l.t == dst {
			written = node
		}
		n, first, err := changedBytes(l, written)
		if err != nil {
			return "", err
		}
		if n > 0 {
			what := "input"
			if written != nil {
				what = "destination outside the view"
			}
			return fmt.Sprintf("%d bytes of %s %s changed (first at byte %d)", n, what, l.t.Name, first), nil
		}
	}
	return "", nil
}

// RunAll runs cases on be in order and returns their results.
func RunAll(be ops.Backend, cases []Case) []Result {
	out := make([]Result, len(cases))
	for i, c := range cases {
		out[i] = Run(be, c)
	}
	return out
}

// Tally counts results that passed, failed and were skipped.
func Tally(results []Result) (passed, failed, skipped int) {
	for _, r := range results {
		switch {
		case r.Passed():
			passed++
		case r.Status == StatusSkipped:
			skipped++
		default:
			failed++
		}
	}
	return passed, failed, skipped
}

// judgeSample compares the sampled outputs idx of the computed node with
// their reference want.
func judgeSample(node *ops.Tensor, b *Builder, tol Tolerance, idx []int64, want []float64, res Result, o runOptions) Result {
	all, err := reference.Read(node)
	if err != nil {
		res.fail("read output")
		res.Err = res.noteErr(err)
		return res
	}
	got := make([]float64, len(idx))
	for i, j := range idx {
		got[i] = all[j]
	}
	if reason := res.judge(tol, [4]int64{int64(len(idx)), 1, 1, 1}, got, want); reason != "" {
		res.fail("sample of %d outputs: %s", len(idx), reason)
		return res
	}
	res.Status = StatusOK
	res.Reason = sampledReason
	if o.keep != nil {
		o.keep(node, b)
	}
	return res
}

// judge compares got with want, records the metrics in res and returns
// why they break tol, or "" (ne locates the worst element for the
// message).
func (res *Result) judge(tol Tolerance, ne [4]int64, got, want []float64) string {
	m := compare(got, want)
	res.Elements, res.NMSE, res.MaxErr, res.RefMax, res.NaNMismatch = m.n, Metric(m.nmse), Metric(m.maxErr), Metric(m.refMax), m.nanMismatch
	return tol.judge(m, ne, got, want)
}
