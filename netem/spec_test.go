package netem_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/netem"
)

func TestParse(t *testing.T) {
	good := []struct {
		spec string
		want netem.Conditions
		text string // String of the result
	}{
		{"latency=1ms", netem.Conditions{Latency: time.Millisecond}, "latency=1ms"},
		{"latency=1ms,jitter=200us", netem.Conditions{Latency: time.Millisecond, Jitter: 200 * time.Microsecond}, "latency=1ms,jitter=200us"},
		{" jitter=200µs , latency=1.5ms ", netem.Conditions{Latency: 1500 * time.Microsecond, Jitter: 200 * time.Microsecond}, "latency=1.5ms,jitter=200us"},
		{"latency=0", netem.Conditions{}, "latency=0s"},
		{"latency=2ms,jitter=2ms", netem.Conditions{Latency: 2 * time.Millisecond, Jitter: 2 * time.Millisecond}, "latency=2ms,jitter=2ms"},
		{"latency=10s", netem.Conditions{Latency: 10 * time.Second}, "latency=10s"},
	}
	for _, tc := range good {
		got, err := netem.Parse(tc.spec)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.spec, got, err, tc.want)
			continue
		}
		if got.String() != tc.text {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.spec, got.String(), tc.text)
		}
		if back, err := netem.Parse(got.String()); err != nil || back != got {
			t.Errorf("Parse(%q) = %+v, %v; want %+v back", got.String(), back, err, got)
		}
	}

	bad := []struct{ spec, says string }{
		{"", "empty"},
		{"   ", "empty"},
		{"latency", "want key=value"},
		{"latency=", "want key=value"},
		{"=1ms", "want key=value"},
		{"latency=1ms,", "want key=value"},
		{"latency=1", "want a duration"},
		{"latency=fast", "want a duration"},
		{"latency=-1ms", "want a duration"},
		{"latency=11s", "want a duration"},
		{"latency=1ms,latency=2ms", "given twice"},
		{"jitter=1ms", "has no latency"},
		{"latency=1ms,jitter=2ms", "jitter 2ms is more than latency 1ms"},
		{"latency=1ms,loss=1%", `unknown key "loss"`},
		{"delay=1ms", `unknown key "delay"`},
	}
	for _, tc := range bad {
		_, err := netem.Parse(tc.spec)
		if !errors.Is(err, netem.ErrSpec) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Parse(%q) = %v; want ErrSpec saying %q", tc.spec, err, tc.says)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	if got := (netem.Conditions{Latency: time.Millisecond}).RoundTrip(); got != 2*time.Millisecond {
		t.Errorf("RoundTrip = %v, want 2ms", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"latency=1ms", "latency=1ms,jitter=200us", "jitter=1s", "x=y,,", "latency=1e3h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		c, err := netem.Parse(spec)
		if err != nil {
			if !errors.Is(err, netem.ErrSpec) {
				t.Fatalf("Parse(%q): %v does not wrap ErrSpec", spec, err)
			}
			return
		}
		if c.Latency < 0 || c.Latency > netem.MaxLatency || c.Jitter < 0 || c.Jitter > c.Latency {
			t.Fatalf("Parse(%q) = %+v: out of range", spec, c)
		}
		if back, err := netem.Parse(c.String()); err != nil || back != c {
			t.Fatalf("Parse(%q) = %+v, %v; want %+v", c.String(), back, err, c)
		}
	})
}
