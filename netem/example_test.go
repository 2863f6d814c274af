package netem_test

import (
	"fmt"

	"github.com/lockbench/lockbench/netem"
)

func ExampleParse() {
	c, err := netem.Parse("jitter=200us,latency=1ms")
	if err != nil {
		panic(err)
	}
	fmt.Println(c, "round trip +", c.RoundTrip())

	_, err = netem.Parse("latency=1ms,jitter=2ms")
	fmt.Println(err)
	// Output:
	// latency=1ms,jitter=200us round trip + 2ms
	// netem: bad network spec: jitter 2ms is more than latency 1ms: a delay cannot be negative
}
