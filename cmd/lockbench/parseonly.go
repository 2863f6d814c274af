package main

import (
	"bytes"
	"errors"
	"io"
	"strings"
)

// flagsOnlyOutput is the stdout parseOnly gives a command. A command handed it parses and
// checks its flags and arguments as usual, and returns exitOK at the first step that would
// start, reach or read anything: a server, a topology, a state directory, a file named by a
// flag (a password, a certificate, a result file). Every command checks flagsOnly at that step;
// run, sweep and worker in the parser they share (parseCommandFlags), which then returns as
// --help does.
type flagsOnlyOutput struct{ io.Writer }

// flagsOnly reports whether stdout is parseOnly's: stop after the flag checks.
func flagsOnly(stdout io.Writer) bool {
	_, ok := stdout.(flagsOnlyOutput)
	return ok
}

// parseOnly checks the command line args (without the program name) the way lockbench would
// take it, without running anything: the subcommand exists, its flags parse against the
// current flag sets, and the checks that need no server and no file pass. It returns the
// message lockbench would print, as an error, or nil.
func parseOnly(args []string) error {
	var stderr bytes.Buffer
	if code := dispatch(args, flagsOnlyOutput{io.Discard}, &stderr); code != exitOK {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		return errors.New(msg)
	}
	return nil
}
