package docker

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckImageRef(t *testing.T) {
	t.Parallel()
	for _, ref := range []string{"redis:7", "lockbench/redis:local", "registry.example:5000/team/redis@sha256:" + strings.Repeat("a", 64)} {
		if err := CheckImageRef(ref); err != nil {
			t.Errorf("CheckImageRef(%q): %v", ref, err)
		}
	}
	for _, ref := range []string{"Not A Tag", "no spaces allowed", ""} {
		err := CheckImageRef(ref)
		if !errors.Is(err, ErrBadImageRef) || !strings.HasPrefix(err.Error(), `"`+ref+`" is not an image reference (want e.g. redis:7 or lockbench/redis:local): `) {
			t.Errorf("CheckImageRef(%q): %v; want ErrBadImageRef with the usual message", ref, err)
		}
	}
}
