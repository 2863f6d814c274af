package bench

import (
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/redis/rueidis"
)

// CheckAttached refuses server faults without leave and keys of lockbench's shapes already
// there, and returns the cleanup record otherwise; on a started topology it checks nothing.
func TestCheckAttached(t *testing.T) {
	t.Parallel()
	tgt := attach(t, func(c rueidis.Client) {
		do(t, c, "HSET", "old:3", "owner:1", "1")
		do(t, c, "PEXPIRE", "old:3", "600000")
	}, "", "")
	rep := &lines{}
	kill, err := faults.Parse("failover@1s")
	if err != nil {
		t.Fatal(err)
	}
	fc := FaultCheck{Faults: []faults.Fault{kill}, Runs: 1, Attached: true, AllowAttached: true,
		Run: faults.Layout{Procs: 1, Duration: 100 * time.Millisecond}} // the fault comes after the phase
	if _, err := CheckAttached(t.Context(), tgt, fc, "new:", nil, false, rep); !errors.Is(err, ErrBadSpec) {
		t.Errorf("a fault after the phase: %v; want ErrBadSpec", err)
	}
	if _, err := CheckAttached(t.Context(), tgt, FaultCheck{}, "old:", nil, false, rep); !errors.Is(err, ErrKeysExist) {
		t.Errorf("keys already there: %v; want ErrKeysExist", err)
	}
	if cleanup, err := CheckAttached(t.Context(), tgt, FaultCheck{}, "new:", nil, false, rep); err != nil || cleanup == nil || cleanup.Prefix != "new:" {
		t.Errorf("a clean prefix: %+v, %v; want its cleanup record", cleanup, err)
	}
	if cleanup, err := CheckAttached(t.Context(), openSingle(t), FaultCheck{}, "x", nil, false, rep); cleanup != nil || err != nil {
		t.Errorf("a started topology: %+v, %v; want nothing checked", cleanup, err)
	}
}
