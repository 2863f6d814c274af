// Command lockbench benchmarks and load-tests Redis distributed locks.
//
// The logic lives in the packages under lockbench/; this command parses flags and calls them.
package main

import (
	"fmt"
	"io"
	"os"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `lockbench — benchmark and load generator for Redis distributed locks

Usage:
  lockbench run [flags]     run a workload against one or more lock drivers, side by side
  lockbench version         print the version
  lockbench help [command]  show help

Run 'lockbench run --help' for the run flags and examples.
`

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "run":
		return runCommand(args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "lockbench", version)
		return exitOK
	case "help", "-h", "--help":
		if len(args) > 1 && args[1] == "run" {
			return runCommand([]string{"--help"}, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "lockbench: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
}
