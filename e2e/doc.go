// Package e2e holds lockbench's end-to-end tests: Docker, Compose, Swarm and the safety
// matrix's scenarios, each driving the real lockbench binary, built once per test binary from
// ./cmd/lockbench, as a user would run it. They live apart from cmd/lockbench so that go test
// runs them beside its tests instead of after them, and so that they can use nothing of package
// main but what a user sees: flags, exit codes, output and result files.
//
// The package has no code of its own; everything is in its tests.
package e2e
