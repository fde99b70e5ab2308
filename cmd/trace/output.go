package main

import (
	"context"
	"fmt"
	"io"

	"github.com/kernbench/kernbench/graphs/dot"
	"github.com/kernbench/kernbench/internal/cli"
)

// writeOutputs writes the files and tables c asks for.
func writeOutputs(ctx context.Context, c *config, res *result, stdout, stderr io.Writer) error {
	if c.dotFile != "" {
		err := create(c.dotFile, func(w io.Writer) error {
			return dot.Write(w, res.graph, dot.Options{Filter: c.filter, Records: res.graphRecs, Title: res.title})
		})
		if err != nil {
			return err
		}
		kept, boundary := dot.Select(res.graph, c.filter)
		fmt.Fprintf(stdout, "wrote %s: %d of %d nodes, %d more at the boundary\n", c.dotFile, len(kept), res.graph.Len(), len(boundary))
		if len(kept) == 0 {
			fmt.Fprintf(stderr, "trace: the filter keeps no node of the graph\n")
		}
		if len(c.render) > 0 && !dot.Available() {
			fmt.Fprintf(stderr, "trace: the dot program is not installed: %s not rendered (apt-get install graphviz)\n", c.dotFile)
		} else {
			for _, out := range c.renderPaths() {
				if err := render(ctx, c.dotFile, out); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "rendered %s\n", out)
			}
		}
	}
	tr := res.trace()
	if c.chromeFile != "" {
		if err := create(c.chromeFile, tr.WriteChrome); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s: %d slices (open in https://ui.perfetto.dev or chrome://tracing)\n", c.chromeFile, res.records.Len()+len(res.spans))
	}
	if c.pprofFile != "" {
		if err := create(c.pprofFile, tr.WriteProfile); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s: %d records (go tool pprof -top %s)\n", c.pprofFile, res.records.Len(), c.pprofFile)
	}
	if c.summary {
		if err := tr.Summary().Write(stdout); err != nil {
			return err
		}
	}
	return nil
}

// render draws the dot file in as out with the dot program, through a
// temporary file that becomes out when dot succeeds.
func render(ctx context.Context, in, out string) error {
	f, err := cli.CreateAtomic(out)
	if err != nil {
		return err
	}
	f.Close()
	if err := dot.Render(ctx, in, f.Name()); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// create writes a file through write, atomically: the file appears only
// when complete.
func create(path string, write func(io.Writer) error) error {
	return cli.WriteAtomic(path, write)
}
