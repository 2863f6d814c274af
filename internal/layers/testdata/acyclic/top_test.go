package acyclic

// A test file using top.go from below would be a cycle; test files are not checked.
var _ = bottom{size: Top()}
