// Command opbench validates and measures kernbench's op kernels.
//
// Usage:
//
//	opbench <command> [flags]
//
// Commands:
//
//	validate   run the case matrix on a backend against the float64 reference
//
// Run "opbench <command> -h" for a command's flags.
package main

import (
	"fmt"
	"io"
	"os"
)

// Exit codes.
const (
	exitOK      = 0 // everything passed
	exitFailure = 1 // the command ran and something failed
	exitUsage   = 2 // bad command line
)

// A command is one opbench subcommand. run gets the arguments after the
// command's name and returns the exit code.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands lists the subcommands; sweep, compare, roofline and plot slot
// in here.
var commands = []command{
	{name: "validate", summary: "run the case matrix on a backend against the float64 reference", run: runValidate},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches args to a subcommand and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return exitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "opbench: unknown command %q\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprint(w, `opbench validates and measures kernbench's op kernels.

Usage:

	opbench <command> [flags]

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "\t%-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Examples:

	opbench validate                          # every case on the CPU
	opbench validate -op mul_mat -type q4_0   # one op, one type
	opbench validate -op soft_max,flash_attn_ext -v

Run "opbench <command> -h" for a command's flags.
`)
}
