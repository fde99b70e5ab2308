// Package gputest holds what the GPU backends' tests share.
package gputest

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/kernbench/kernbench/internal/require"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/simt"
)

// Emulated opens a backend on the SIMT emulator with open and closes it
// when tb ends. Where the emulator cannot run here, tb is skipped, or
// fails under $KERNBENCH_STRICT (as CI sets it); an emulator that runs
// but a backend that does not open fails tb.
func Emulated[B interface{ Close() error }](tb testing.TB, open func() (B, error)) B {
	tb.Helper()
	if err := simt.Available(); err != nil {
		require.Skip(tb, "SIMT emulator unavailable: %v", err)
	}
	b, err := open()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	return b
}

// WriteI32 writes v into x's storage (ids for GET_ROWS, MUL_MAT_ID and
// SSM_SCAN), little-endian, as a backend's buffer takes host bytes.
func WriteI32(tb testing.TB, x *ops.Tensor, v ...int32) {
	tb.Helper()
	p := make([]byte, 4*len(v))
	for i, id := range v {
		binary.LittleEndian.PutUint32(p[4*i:], uint32(id))
	}
	if _, err := x.Buffer.WriteAt(p, x.Offset); err != nil {
		tb.Fatal(err)
	}
}

// GetRowsNodes returns a GET_ROWS node of table per ids tensor, named
// rows0, rows1, ... and allocated on b: the node lists the status tests
// run, each id tensor good or out of the table's range.
func GetRowsNodes(tb testing.TB, b ops.Backend, table *ops.Tensor, ids ...*ops.Tensor) []*ops.Tensor {
	tb.Helper()
	nodes := make([]*ops.Tensor, 0, len(ids))
	for i, id := range ids {
		n, err := ops.GetRows(table, id)
		if err != nil {
			tb.Fatal(err)
		}
		n.Name = fmt.Sprintf("rows%d", i)
		if err := ops.AllocTensor(b, n, 0); err != nil {
			tb.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	return nodes
}
