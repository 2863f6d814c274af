// Package gobench is a runnable example, not a library: gobench_test.go is a Go test that
// benchmarks two lock drivers side by side on a redis-server it starts, checks thresholds and
// writes a lockbench result file, which `lockbench report` and `lockbench compare` read. Copy
// the test into a repository of your own; docs/go-benchmark.md walks through it.
package gobench
