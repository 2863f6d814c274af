package bench

import (
	"slices"
	"testing"
	"time"
)

// ParseStartAt reads what WorkerSpec.Args writes, and what people and orchestrators write.
func TestParseStartAt(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 23, 12, 0, 0, 123456789, time.UTC)
	args := WorkerSpec{Driver: "naive", StartAt: start}.Filled().Args()
	i := slices.Index(args, "--start-at")
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("Args %q has no --start-at", args)
	}
	if got, err := ParseStartAt(args[i+1]); err != nil || !got.Equal(start) {
		t.Errorf("ParseStartAt(%q) = %v, %v; want %v, as Args wrote it", args[i+1], got, err, start)
	}
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"2026-11-23T12:00:00Z", time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)},
		{"2026-11-23T13:00:00+01:00", time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)},
		{"1795435200", time.Unix(1795435200, 0).UTC()},
		{"1795435200.5", time.Unix(1795435200, 5e8).UTC()},
	} {
		if got, err := ParseStartAt(c.in); err != nil || !got.Equal(c.want) || got.Location() != time.UTC {
			t.Errorf("ParseStartAt(%q) = %v, %v; want %v in UTC", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "soon", "0", "-5", "1795435200000", "2026-11-23 12:00"} {
		if got, err := ParseStartAt(bad); err == nil {
			t.Errorf("ParseStartAt(%q) = %v; want an error", bad, got)
		}
	}
}
