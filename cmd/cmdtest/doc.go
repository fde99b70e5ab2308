// Package cmdtest tests kernbench's commands together, as a user meets
// them: each command built, run as a process, with bad inputs (flags,
// paths, malformed GGUF files, models with NaN weights), and checked for
// what every command owes: no panic, a non-zero exit, a message naming
// the problem, and no file changed or left behind. It also pins what the
// commands' own tests cannot see from inside: trace's peak memory against
// run's, and what SIGINT and SIGTERM leave while an output is written.
//
// The package has only tests. They build the commands into a temporary
// folder (or use those in $KERNBENCH_CMDTEST_BIN, to check other builds
// of them) and skip where the shared test data or the go tool is missing.
package cmdtest
