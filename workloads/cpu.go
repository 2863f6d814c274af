package workloads

import (
	"time"

	"github.com/lockbench/lockbench/drivers"
)

// clientCPU is the CPU time the client side has used so far: this process, plus the library's
// own processes when l is a drivers.CPULocker (an external driver's adapter), which is also
// returned alone as ext. False if either is unknown: a figure without the adapter would flatter
// it.
func clientCPU(l drivers.Locker) (total, ext time.Duration, ok bool) {
	d, ok := processCPU()
	if c, isExt := l.(drivers.CPULocker); isExt && ok {
		e, eok := c.ExternalCPU()
		return d + e, e, eok
	}
	return d, 0, ok
}
