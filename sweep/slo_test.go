package sweep

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseSLO(t *testing.T) {
	good := []struct {
		in   string
		name string
		pct  float64
		lim  time.Duration
	}{
		{"p99=5ms", "p99", 99, 5 * time.Millisecond},
		{" p50=800us ", "p50", 50, 800 * time.Microsecond},
		{"p50=800µs", "p50", 50, 800 * time.Microsecond},
		{"p90=1.5ms", "p90", 90, 1500 * time.Microsecond},
		{"p999=20ms", "p999", 99.9, 20 * time.Millisecond},
		{"p9999=1s", "p9999", 99.99, time.Second},
		{"p995=2ms", "p995", 99.5, 2 * time.Millisecond},
		{"p99.9=3ms", "p99.9", 99.9, 3 * time.Millisecond},
		{"p75.5=1ms", "p75.5", 75.5, time.Millisecond},
		{"p05=100us", "p05", 5, 100 * time.Microsecond},
		{"p0.1=1ms", "p0.1", 0.1, time.Millisecond},
	}
	for _, c := range good {
		got, err := ParseSLO(c.in)
		if err != nil || got.Name != c.name || got.Percentile != c.pct || got.Limit != c.lim {
			t.Errorf("ParseSLO(%q) = %+v, %v; want %s %v %v", c.in, got, err, c.name, c.pct, c.lim)
		}
	}
	bad := []struct{ in, msg string }{
		{"", "want PERCENTILE=DURATION"},
		{"p99", "want PERCENTILE=DURATION"},
		{"p99<5ms", "want PERCENTILE=DURATION"},
		{"p99=", "no duration"},
		{"p99=5", "not a duration with a unit"},
		{"p99=fast", "not a duration"},
		{"p99=0s", "must be positive"},
		{"p99=-1ms", "must be positive"},
		{"99=5ms", "want p followed by digits"},
		{"P99=5ms", "want p followed by digits"},
		{"p=5ms", "want p followed by digits"},
		{"p9=5ms", "ambiguous"},
		{"p00=5ms", "above 0 and below 100"},
		{"p100=5ms", "read as 99.x"},
		{"p123=5ms", "read as 99.x"},
		{"p100.0=5ms", "below 100"},
		{"p99.=5ms", "want p followed by digits"},
		{"p.9=5ms", "want p followed by digits"},
		{"p99.9.9=5ms", "want p followed by digits"},
		{"p-1=5ms", "want p followed by digits"},
		{"p 99=5ms", "want p followed by digits"},
		{"p99 =5ms", "want p followed by digits"},
		{"p1e1=5ms", "want p followed by digits"},
		{"p0.0=5ms", "above 0"},
		{"pmax=5ms", "want p followed by digits"},
	}
	for _, c := range bad {
		_, err := ParseSLO(c.in)
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ParseSLO(%q) error %v; want ErrBadInput containing %q", c.in, err, c.msg)
		}
	}
}

// The String form reads back as the same SLO.
func TestSLOStringRoundTrip(t *testing.T) {
	for _, in := range []string{"p99=5ms", "p999=250us", "p99.99=1.5s"} {
		s, err := ParseSLO(in)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseSLO(s.String())
		if err != nil || again != s {
			t.Errorf("%q: String %q reads back as %+v, %v", in, s.String(), again, err)
		}
	}
}

func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"p99=5ms", "p999=1s", "p99.9=2us", "p5=1ms", "p99=0", "=", "p99.=1ms"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slo, err := ParseSLO(s)
		if err != nil {
			if !errors.Is(err, ErrBadInput) {
				t.Fatalf("ParseSLO(%q): error %v does not wrap ErrBadInput", s, err)
			}
			return
		}
		if !(slo.Percentile > 0 && slo.Percentile < 100) || slo.Limit <= 0 {
			t.Fatalf("ParseSLO(%q) accepted %+v", s, slo)
		}
	})
}
