package drivers

import "runtime"

func goMaxProcs() int { return runtime.GOMAXPROCS(0) }
