// Package testparallel lets a test package run more of its parallel tests at once than go test's
// default, for packages whose tests spend their time waiting on the servers they start
// (failovers, paused servers, client timeouts) rather than on the CPU.
package testparallel

import (
	"flag"
	"strconv"
)

// Default sets the test binary's -test.parallel to n unless the command line gave one, so that an
// explicit go test -parallel still wins. Call it from TestMain before m.Run. go test's own default
// is GOMAXPROCS (2 on the CI machine), which leaves such a package waiting on one or two tests at
// a time with the CPU idle. It is not safe for concurrent use; TestMain runs alone.
func Default(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		// The flag exists in every test binary; Set fails only on a bad value, and n is an int.
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
