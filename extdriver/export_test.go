package extdriver

// Attach drives an adapter already running in the test's process, at the other end of stdin
// and stdout: the in-process benchmarks and tests.
var Attach = attach
