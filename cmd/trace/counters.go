package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kernbench/kernbench/graphs"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/simt"
	"github.com/kernbench/kernbench/simt/roofline"
)

// counters collects the SIMT emulator's profile counters per graph node
// (-counters). The emulated GPU backends launch on the process's one
// simt.Device (simt.Open), as opbench profile reaches it: the profiler
// runs from start to stop, and each record of a stepwise graph (made once
// its node's launches are done) takes the launches since the record
// before it.
type counters struct {
	dev    *simt.Device
	gpu    roofline.GPU
	active bool
	nodes  []nodeCounters
	err    error
}

// nodeCounters is one node's launches, their counters extrapolated to
// the grid (every block runs, so they are exact).
type nodeCounters struct {
	node     *ops.Tensor
	name, op string
	flops    float64
	launches []simt.KernelProfile
}

// newCounters opens the emulator's device for -counters on gpu.
func newCounters(gpu roofline.GPU) (*counters, error) {
	dev, err := simt.Open()
	if err != nil {
		return nil, fmt.Errorf("-counters: %w", err)
	}
	return &counters{dev: dev, gpu: gpu}, nil
}

// profileOptions runs every block: a sampled launch would leave its
// output uncomputed for the nodes after it.
var profileOptions = simt.ProfileOptions{SampleBlocks: 0}

// start turns the profiler on; a nil c does nothing.
func (c *counters) start() error {
	if c == nil {
		return nil
	}
	if err := c.dev.StartProfile(profileOptions); err != nil {
		return fmt.Errorf("-counters: %w", err)
	}
	c.active = true
	return nil
}

// record takes the launches since the last record for r's node.
func (c *counters) record(r graphs.Record) {
	if c == nil || !c.active {
		return
	}
	profs := c.dev.StopProfile()
	if err := c.dev.StartProfile(profileOptions); err != nil && c.err == nil {
		c.err = err
	}
	if len(profs) == 0 {
		return
	}
	n := nodeCounters{node: r.Node, name: r.Node.Label(), op: opLabel(r), flops: float64(r.Cost.Flops)}
	for _, p := range profs {
		n.launches = append(n.launches, p.Extrapolate())
	}
	c.nodes = append(c.nodes, n)
}

// stop turns the profiler off.
func (c *counters) stop() error {
	if c == nil || !c.active {
		return nil
	}
	c.dev.StopProfile()
	c.active = false
	if c.err != nil {
		return fmt.Errorf("-counters: %w", c.err)
	}
	return nil
}

// opLabel is a record's op with its type, as the dot dump labels it:
// MUL_MAT(q4_0).
func opLabel(r graphs.Record) string {
	if r.Kind != graphs.KindCompute {
		return r.Kind.String()
	}
	t := r.Node
	if len(t.Src) > 0 && t.Src[0] != nil && t.Src[0].Type != t.Type {
		return fmt.Sprintf("%v(%v)", t.Op, t.Src[0].Type)
	}
	return t.Op.String()
}

// nodeSummary is a node's launches summed, with their estimate.
type nodeSummary struct {
	loads, stores simt.GlobalCounters
	dram          float64
	conflicts     uint64
	tensor        float64
	est           roofline.Estimate
}

// summarize sums n's launches and estimates them on gpu: the sum of each
// launch's lower bound, limited by the resource of the longest one.
func summarize(n nodeCounters, gpu roofline.GPU) nodeSummary {
	var s nodeSummary
	fp32 := roofline.ChargeFP32(n.launches, n.flops)
	longest := -1.0
	s.est.GPU = gpu.Name
	for i, k := range n.launches {
		s.loads.Requests += k.GlobalLoads.Requests
		s.loads.Sectors += k.GlobalLoads.Sectors
		s.stores.Requests += k.GlobalStores.Requests
		s.stores.Sectors += k.GlobalStores.Sectors
		s.dram += k.DRAMBytes()
		s.conflicts += k.SharedLoads.BankConflicts() + k.SharedStores.BankConflicts()
		s.tensor += k.TensorFLOPs()
		e := gpu.Estimate(roofline.FromProfile(k, fp32[i]))
		s.est.Seconds += e.Seconds
		if e.Seconds > longest {
			longest, s.est.Limiter = e.Seconds, e.Limiter
		}
	}
	return s
}

// write prints a line per node that launched kernels, numbered as in g
// (the dot dump's graph), and the total.
func (c *counters) write(w io.Writer, what string, g *graphs.Graph) error {
	fmt.Fprintf(w, "counters per node of %s (SIMT emulator, every block; estimates on %s are lower bounds from published peaks, not times):\n", what, c.gpu.Name)
	if len(c.nodes) == 0 {
		fmt.Fprintf(w, "  no node launched a kernel\n")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "  node\tname\top\tkernels\tld sectors/req\tst sectors/req\tDRAM bytes\tbank conflicts\ttensor\testimate\tlimited by\n")
	var total float64
	for _, n := range c.nodes {
		s := summarize(n, c.gpu)
		total += s.est.Seconds
		share := "-"
		if n.flops > 0 {
			share = fmt.Sprintf("%.0f%%", 100*s.tensor/n.flops)
		}
		var names []string
		for _, k := range n.launches {
			names = append(names, k.Kernel)
		}
		idx := "-"
		if i := g.Index(n.node); i >= 0 {
			idx = fmt.Sprint(i)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d %s\t%.2f\t%.2f\t%s\t%d\t%s\t%s\t%s\n", idx, n.name, n.op, len(n.launches), strings.Join(names, ","),
			s.loads.SectorsPerRequest(), s.stores.SectorsPerRequest(), bytesSI(s.dram), s.conflicts, share, estDur(s.est.Seconds), s.est.Limiter)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "  nodes that launched kernels: %d; their estimates add up to %s on %s (a lower bound, not a time)\n", len(c.nodes), estDur(total), c.gpu.Name)
	return nil
}

// bytesSI formats a byte count with an SI prefix.
func bytesSI(v float64) string {
	for _, u := range []struct {
		f float64
		s string
	}{{1e9, "GB"}, {1e6, "MB"}, {1e3, "kB"}} {
		if v >= u.f {
			return fmt.Sprintf("%.2f %s", v/u.f, u.s)
		}
	}
	return fmt.Sprintf("%.0f B", v)
}

// estDur formats an estimate's seconds, which are short.
func estDur(s float64) string {
	switch {
	case s < 1e-6:
		return fmt.Sprintf("%.1f ns", s*1e9)
	case s < 1e-3:
		return fmt.Sprintf("%.2f µs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.3f ms", s*1e3)
	}
	return fmt.Sprintf("%.3f s", s)
}
