package sweep

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// Input.Loads picks the mode from the flags given, defaults to DefaultConcurrencySteps, and
// refuses mixed or incomplete steps with ErrBadInput naming the flags.
func TestInputLoads(t *testing.T) {
	t.Parallel()
	givenOf := func(names ...string) func(string) bool {
		return func(n string) bool { return slices.Contains(names, n) }
	}
	mode, loads, err := Input{Given: givenOf()}.Loads()
	if err != nil || mode != results.SweepConcurrency || len(loads) != len(DefaultConcurrencySteps) {
		t.Errorf("Loads(nothing) = %s, %v, %v; want the default concurrency steps", mode, loads, err)
	}
	mode, loads, err = Input{Rates: []float64{100, 200}, Arrival: "poisson", Given: givenOf("rates", "arrival")}.Loads()
	if err != nil || mode != results.SweepRate || !slices.Equal(loads, []float64{100, 200}) {
		t.Errorf("Loads(rates) = %s, %v, %v", mode, loads, err)
	}
	for _, tc := range []struct {
		in   Input
		want string
	}{
		{Input{Given: givenOf("concurrency-steps", "rates")}, "--concurrency-steps (closed loop) and rate steps (open loop) exclude each other"},
		{Input{Given: givenOf("rates", "steps")}, "give the rates either one by one"},
		{Input{Given: givenOf("rate-from")}, "a rate series needs both --rate-from and --rate-to"},
		{Input{Given: givenOf("concurrency")}, "--concurrency is the workers of one run"},
		{Input{Given: givenOf("arrival")}, "--arrival paces an open loop"},
		{Input{Rates: []float64{100}, Arrival: "bursty", Given: givenOf("rates", "arrival")}, "rate steps: "},
	} {
		if _, _, err := tc.in.Loads(); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Loads(%+v) = %v; want ErrBadInput, %q", tc.in, err, tc.want)
		}
	}
}
