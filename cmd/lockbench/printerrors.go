package main

import (
	"fmt"
	"io"
)

// printErrors prints each of the errors err joins (errors.Join) on its own line, as lockbench
// cmd's.
func printErrors(stderr io.Writer, cmd string, err error) {
	if err == nil {
		return
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		fmt.Fprintf(stderr, "lockbench %s: %v\n", cmd, e)
	}
}
