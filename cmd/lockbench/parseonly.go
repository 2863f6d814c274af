package main

import (
	"bytes"
	"errors"
	"io"
	"strings"
)

// parseOnly checks the command line args (without the program name) the way lockbench would
// take it, without running anything: the subcommand exists, its flags parse against the
// current flag sets, and the checks that need no server and no file pass. It returns the
// message lockbench would print, as an error, or nil. The commands see flagsOnlyOutput
// (flagsonly.go, apart from this file, which calls dispatch, so that no command uses a file
// that uses main.go).
func parseOnly(args []string) error {
	var stderr bytes.Buffer
	if code := dispatch(args, flagsOnlyOutput{io.Discard}, &stderr); code != exitOK {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		return errors.New(msg)
	}
	return nil
}
