// Command null is lockbench's null adapter: the external-driver protocol over an in-memory lock,
// no Redis. Run beside an external driver, it shows what part of a latency is the protocol.
// lockbench has the same adapter built in ("exec:null", which runs "lockbench null-adapter");
// this command is for adapter authors and for its negative controls.
//
//	lockbench run --driver 'exec:null=go run ./adapters/null'
//
// -fault makes it a negative control (see adapter.WithFault): nolock, die-after=N, hang-after=N,
// garbage-after=N. -delay D answers every call D later, as a library waiting on its server
// does (see adapter.WithDelay): the pipe's cost at a library's latency.
package main

import (
	"os"

	"github.com/lockbench/lockbench/extdriver/adapter"
)

func main() {
	os.Exit(adapter.MainNull(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
