// Command null is lockbench's null adapter: the external-driver protocol over an in-memory lock,
// no Redis. Run beside an external driver, it shows what part of a latency is the protocol.
//
//	lockbench run --driver 'exec:null=go run ./adapters/null'
//
// -fault makes it a negative control (see adapter.WithFault): nolock, die-after=N, hang-after=N,
// garbage-after=N.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/lockbench/lockbench/extdriver/adapter"
)

func main() {
	fault := flag.String("fault", "", "negative control: nolock, die-after=N, hang-after=N or garbage-after=N")
	flag.Parse()
	lib, err := adapter.WithFault(adapter.NewMemory(adapter.LeaseFromEnv()), *fault)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := adapter.Serve(os.Stdin, os.Stdout, lib); err != nil {
		fmt.Fprintln(os.Stderr, "null adapter:", err)
		os.Exit(1)
	}
}
