//go:build lockbench_never

package acyclic

// A file the build leaves out is not checked.
var _ = Top()
