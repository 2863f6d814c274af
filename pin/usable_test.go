package pin

import (
	"errors"
	"runtime"
	"testing"
)

func TestParseUsable(t *testing.T) {
	t.Parallel()
	avail := CPUs{0, 1, 2, 3}
	if _, err := ParseUsable("1-x", avail); !errors.Is(err, ErrBadList) {
		t.Errorf("ParseUsable of a bad list: %v; want ErrBadList", err)
	}
	_, err := ParseUsable("1,7", avail)
	if want := "1,7: CPU 7 does not exist here or is not available to lockbench (available: 0-3)"; !errors.Is(err, ErrNotAvailable) || err.Error() != want {
		t.Errorf("ParseUsable of an unavailable CPU: %v; want ErrNotAvailable, %q", err, want)
	}
	cpus, err := ParseUsable("1,3", avail)
	if runtime.GOOS != "linux" {
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("ParseUsable off Linux: %v; want ErrUnsupported", err)
		}
		return
	}
	if err != nil || cpus.String() != "1,3" {
		t.Errorf("ParseUsable(1,3) = %v, %v", cpus, err)
	}
}
