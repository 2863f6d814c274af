package main

import "io"

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
