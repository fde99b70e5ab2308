package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kernbench/kernbench/graphs/dot"
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
			for _, f := range c.render {
				out := strings.TrimSuffix(c.dotFile, filepath.Ext(c.dotFile)) + "." + f
				if out == c.dotFile {
					continue
				}
				if err := dot.Render(ctx, c.dotFile, out); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "rendered %s\n", out)
			}
		}
	}
	if c.chromeFile != "" {
		if err := create(c.chromeFile, res.trace.WriteChrome); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s: %d slices (open in https://ui.perfetto.dev or chrome://tracing)\n", c.chromeFile, len(res.trace.Records)+len(res.trace.Spans))
	}
	if c.pprofFile != "" {
		if err := create(c.pprofFile, res.trace.WriteProfile); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s: %d records (go tool pprof -top %s)\n", c.pprofFile, len(res.trace.Records), c.pprofFile)
	}
	if c.summary {
		if err := res.trace.Summary().Write(stdout); err != nil {
			return err
		}
	}
	return nil
}

// create writes a file through write.
func create(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
