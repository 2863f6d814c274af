package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// cmdFlagSet is the flag set of one of the commands besides run, sweep and worker, with what
// each of them prints the same way: its usage on --help, and a refusal of bad input.
type cmdFlagSet struct {
	*pflag.FlagSet
	name   string // as in "lockbench NAME: …"
	stderr io.Writer
}

// newCmdFlagSet returns the empty flag set of `lockbench name`: flags listed in the order
// they are added, nothing printed by pflag itself.
func newCmdFlagSet(name string, stderr io.Writer) *cmdFlagSet {
	fs := pflag.NewFlagSet("lockbench "+name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	return &cmdFlagSet{FlagSet: fs, name: name, stderr: stderr}
}

// bad prints a refusal of bad input, with where to find the usage, and returns exitUsage.
func (c *cmdFlagSet) bad(format string, a ...any) int {
	fmt.Fprintf(c.stderr, "lockbench %s: %s\nRun 'lockbench %s --help' for usage.\n", c.name, fmt.Sprintf(format, a...), c.name)
	return exitUsage
}

// parse adds --help, last, and parses args. On a parse error it refuses it; on --help it prints
// head, the flags and tail to stdout. done says the command is to return code now.
func (c *cmdFlagSet) parse(args []string, stdout io.Writer, head, tail string) (code int, done bool) {
	help := c.BoolP("help", "h", false, "show this help")
	if err := c.Parse(args); err != nil {
		return c.bad("%v", err), true
	}
	if *help {
		fmt.Fprintf(stdout, "%s\n\nFlags:\n%s%s", head, c.FlagUsages(), tail)
		return exitOK, true
	}
	return exitOK, false
}
