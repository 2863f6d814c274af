package bench

import (
	"errors"
	"strings"
	"testing"
)

// MetricsSpec.Check passes no address, refuses a bad one, a negative linger and ports the
// generator processes cannot have, naming the flag.
func TestMetricsSpecCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec MetricsSpec
		want string // "" passes
	}{
		{MetricsSpec{}, ""},
		{MetricsSpec{Addr: "127.0.0.1:9464"}, ""},
		{MetricsSpec{Addr: "nowhere"}, "--metrics-addr: "},
		{MetricsSpec{Addr: "127.0.0.1:9464", Linger: -1}, "--metrics-linger -1ns must not be negative"},
		{MetricsSpec{Addr: "127.0.0.1:65535", Procs: 2}, "--metrics-addr with --procs: "},
	} {
		err := tc.spec.Check()
		if tc.want == "" && err != nil || tc.want != "" && (!errors.Is(err, ErrBadSpec) || !strings.HasPrefix(err.Error(), tc.want)) {
			t.Errorf("%+v: %v; want %q", tc.spec, err, tc.want)
		}
	}
}
