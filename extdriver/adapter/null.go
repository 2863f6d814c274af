package adapter

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/lockbench/lockbench/extdriver"
)

// NullArg is the first argument that makes a program whose main calls ServeBuiltin serve as the
// null adapter: "lockbench null-adapter".
const NullArg = "null-adapter"

// MainNull is the null adapter's main: Serve over Memory (leased by extdriver.EnvLeaseMS) on
// stdin and stdout. args are its flags: -fault makes it a negative control (WithFault), -delay
// answers every call that much later (WithDelay). It returns the exit code: 0 after a clean end
// of stdin, 1 on a protocol or I/O error, 2 on bad flags.
func MainNull(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("null adapter", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fault := fs.String("fault", "", "negative control: nolock, die-after=N, hang-after=N or garbage-after=N")
	delay := fs.Duration("delay", 0, "answer every acquire and release this much later, as a library waiting on its server does (the pipe at a library's latency)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *delay < 0 {
		fmt.Fprintln(stderr, "null adapter: -delay must not be negative")
		return 2
	}
	lib, err := WithFault(WithDelay(NewMemory(LeaseFromEnv()), *delay), *fault)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if err := Serve(stdin, stdout, lib); err != nil {
		fmt.Fprintln(stderr, "null adapter:", err)
		return 1
	}
	return 0
}

// ServeBuiltin is for the first line of a program's main (lockbench's): with NullArg first in
// args (os.Args[1:]) the program is the null adapter, and ServeBuiltin returns its exit code
// and true; otherwise it makes extdriver.NullSpec ("exec:null") run this program with NullArg,
// and returns false. A program that does not call it has no built-in null adapter.
func ServeBuiltin(args []string) (code int, served bool) {
	if len(args) > 0 && args[0] == NullArg {
		return MainNull(args[1:], os.Stdin, os.Stdout, os.Stderr), true
	}
	if exe, err := os.Executable(); err == nil {
		extdriver.SetNullCommand([]string{exe, NullArg})
	}
	return 0, false
}
