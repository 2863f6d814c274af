// Command lockbench benchmarks and load-tests Redis distributed locks.
//
// The logic lives in the packages under lockbench/; this command parses flags and calls them.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/lockbench/lockbench/extdriver/adapter"
)

func main() {
	// "lockbench null-adapter" is the null adapter "exec:null" runs (docs/external-drivers.md).
	if code, served := adapter.ServeBuiltin(os.Args[1:]); served {
		os.Exit(code)
	}
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

// dispatch runs the command args name and returns its exit code.
func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	commands := map[string]func(args []string, stdout, stderr io.Writer) int{
		"run":     runCommand,
		"sweep":   sweepCommand,
		"up":      upCommand,
		"down":    downCommand,
		"status":  statusCommand,
		"check":   checkCommand,
		"acl":     aclCommand,
		"image":   imageCommand,
		"compare": compareCommand,
		"export":  exportCommand,
		"worker":  workerCommand,
		"merge":   mergeCommand,
		"report":  reportCommand,

		"driver-check": driverCheckCommand,
	}
	if cmd, ok := commands[args[0]]; ok {
		return cmd(args[1:], stdout, stderr)
	}
	switch args[0] {
	case "version", "--version":
		fmt.Fprintln(stdout, "lockbench", version)
		return exitOK
	case "help", "-h", "--help":
		return helpCommand(args[1:], commands, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "lockbench: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
}
