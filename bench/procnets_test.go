package bench

import (
	"errors"
	"slices"
	"testing"
)

// ProcNets gives each process its own conditions or the run's, and names the run's as its
// result records them; bad --net-proc values are refused with ErrBadSpec.
func TestProcNets(t *testing.T) {
	t.Parallel()
	nets, runNet, err := ProcNets(nil, 3, "latency=1ms")
	if nets != nil || runNet != "latency=1ms" || err != nil {
		t.Errorf("ProcNets(none) = %v, %q, %v; want nil, the run's, nil", nets, runNet, err)
	}
	nets, runNet, err = ProcNets([]string{"1:latency=5ms"}, 3, "")
	if err != nil || !slices.Equal(nets, []string{"", "latency=5ms", ""}) || runNet != "0: none; 1: latency=5ms; 2: none" {
		t.Errorf("ProcNets(1:latency=5ms) = %q, %q, %v", nets, runNet, err)
	}
	for _, tc := range []struct {
		specs []string
		procs int
		want  string
	}{
		{[]string{"0:latency=1ms"}, 1, "--net-proc gives one of several generator processes its own network conditions: give --procs 2 or more"},
		{[]string{"x"}, 2, `--net-proc "x": want INDEX:SPEC, e.g. 1:latency=5ms`},
		{[]string{"2:latency=1ms"}, 2, `--net-proc "2:latency=1ms": process 2, want 0 to 1 (--procs 2)`},
		{[]string{"1:latency=1ms", "1:latency=2ms"}, 2, "--net-proc: process 1 given twice"},
	} {
		if _, _, err := ProcNets(tc.specs, tc.procs, ""); !errors.Is(err, ErrBadSpec) || err.Error() != tc.want {
			t.Errorf("ProcNets(%q, %d) = %v; want %q", tc.specs, tc.procs, err, tc.want)
		}
	}
}

// SlotIndex counts from 1; ParseStalls reads AT+FOR.
func TestSlotIndexParseStalls(t *testing.T) {
	t.Parallel()
	if i, err := SlotIndex("SLOT", "3", 3); i != 2 || err != nil {
		t.Errorf("SlotIndex(3 of 3) = %d, %v; want 2", i, err)
	}
	for _, v := range []string{"0", "4", "x"} {
		if _, err := SlotIndex("SLOT", v, 3); !errors.Is(err, ErrBadSpec) {
			t.Errorf("SlotIndex(%q of 3) = %v; want ErrBadSpec", v, err)
		}
	}
	st, err := ParseStalls([]string{"3s+2s"}, 1)
	if err != nil || len(st) != 1 || st[0].String() != "3s+2s" {
		t.Errorf("ParseStalls(3s+2s) = %v, %v", st, err)
	}
	if _, err := ParseStalls([]string{"soon"}, 0); !errors.Is(err, ErrBadSpec) {
		t.Errorf("ParseStalls(soon) = %v; want ErrBadSpec", err)
	}
}
