// Package clitest holds what the tests that run the lockbench command share (cmd/lockbench's,
// which run its test binary as lockbench, and e2e's, which run the built binary): a buffer a
// subprocess writes to while the test reads it, and the check that a password drawn by --auth
// appears in no output, result or file.
package clitest
