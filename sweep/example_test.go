package sweep_test

import (
	"fmt"

	"github.com/lockbench/lockbench/sweep"
)

func ExampleParseSLO() {
	for _, s := range []string{"p99=5ms", "p999=20ms", "p99.99=1s", "p9=5ms"} {
		slo, err := sweep.ParseSLO(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: the %vth percentile within %v\n", slo, slo.Percentile, slo.Limit)
	}
	// Output:
	// p99=5ms: the 99th percentile within 5ms
	// p999=20ms: the 99.9th percentile within 20ms
	// p99.99=1s: the 99.99th percentile within 1s
	// bad sweep input: SLO "p9=5ms": percentile "p9" is ambiguous: write p90 for the 90th or p09 for the 9th
}

func ExampleGeometricLoads() {
	rates, err := sweep.GeometricLoads(2000, 200000, 8)
	fmt.Println(rates, err)
	// Output:
	// [2000 3860 7460 14400 27800 53700 104000 200000] <nil>
}
