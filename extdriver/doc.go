// Package extdriver drives lock libraries in any language through adapter processes: lockbench
// starts the adapter command a user gives ("exec:NAME=COMMAND" in --driver), tells it which
// Redis to use in its environment, and sends it acquire and release requests as text lines on
// its stdin; the adapter answers on its stdout, in any order, so many operations are in flight
// at once. docs/external-drivers.md is the protocol's full description; protocol.go is its
// encoding, process.go one running adapter, driver.go the drivers.Driver over it, check.go the
// conformance check (lockbench driver-check).
//
// lockbench measures latency around the protocol call and marks holders between the grant it
// received and the release it sent: an interval inside the adapter's real hold, so a checker's
// overlap is a real one whatever the adapter says.
package extdriver
