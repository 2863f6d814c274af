package drivers

import (
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/lockcore"
)

// A lease under 1 ms is refused when the lockcore driver opens, not by every lock call of the
// run: Redis keeps leases in whole milliseconds.
func TestLockcoreRefusesSubMillisecondLease(t *testing.T) {
	_, err := openLockcore(Config{Addrs: []string{"127.0.0.1:1"}, Lease: 500 * time.Microsecond}, topoSingle, "lockcore", lockcoreTuning{})
	if !errors.Is(err, lockcore.ErrShortLease) {
		t.Fatalf("open with lease 500µs: %v; want ErrShortLease", err)
	}
}
