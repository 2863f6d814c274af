package workloads

import (
	"time"

	"github.com/lockbench/lockbench/drivers"
)

// clientCPU is the CPU time the client side has used so far: this process, plus the library's
// own processes when l is a drivers.CPULocker (an external driver's adapter). False if either
// is unknown: a figure without the adapter would flatter it.
func clientCPU(l drivers.Locker) (time.Duration, bool) {
	d, ok := processCPU()
	if c, ext := l.(drivers.CPULocker); ext && ok {
		e, eok := c.ExternalCPU()
		return d + e, eok
	}
	return d, ok
}
