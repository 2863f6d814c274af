package workloads

import (
	"errors"
	"testing"

	"github.com/lockbench/lockbench/results"
)

type nopResource struct{}

func (nopResource) Write(key, worker int, token int64, hasToken, end bool) {}
func (nopResource) Result() *results.Resource                              { return &results.Resource{} }

// TestOnlyContentionWritesResource: a resource given to a workload whose holders would write
// nothing to it is refused, so that an empty resource never reads as a safe one.
func TestOnlyContentionWritesResource(t *testing.T) {
	for _, name := range Names() {
		w, _ := Get(name)
		err := CheckConfig(w, Config{Hold: 1, Resource: nopResource{}})
		if writes := name == "contention"; WritesResource(w) != writes || (err == nil) != writes {
			t.Errorf("%s: WritesResource %v, CheckConfig with a resource: %v", name, WritesResource(w), err)
		} else if err != nil && !errors.Is(err, ErrBadConfig) {
			t.Errorf("%s: %v, want ErrBadConfig", name, err)
		}
	}
}
