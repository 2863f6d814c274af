package adapter_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/extdriver/adapter"
)

// TestWithDelay: acquires and releases are answered the delay later, the lock still excludes,
// a call whose context ends during the delay returns its error, and the hello says so; the null
// adapter's -delay refuses a negative value.
func TestWithDelay(t *testing.T) {
	const d = 30 * time.Millisecond
	lib := adapter.WithDelay(adapter.NewMemory(0), d)
	if _, ok := lib.(adapter.Immediate); ok {
		t.Fatal("a delayed library is Immediate: Serve would answer it on its reading goroutine")
	}
	ctx := context.Background()
	start := time.Now()
	if err := lib.Acquire(ctx, "a", "k"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < d {
		t.Errorf("acquire answered after %v, want at least %v", took, d)
	}
	short, cancel := context.WithTimeout(ctx, 3*d)
	defer cancel()
	if err := lib.Acquire(short, "b", "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second owner's acquire of a held lock: %v, want the wait to run out", err)
	}
	start = time.Now()
	if err := lib.Release(ctx, "a", "k"); err != nil || time.Since(start) < d {
		t.Errorf("release: %v after %v, want nil after at least %v", err, time.Since(start), d)
	}
	gone, stop := context.WithCancel(ctx)
	stop()
	if err := lib.Acquire(gone, "c", "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("acquire with an ended context: %v", err)
	}
	if h := lib.Hello(); !strings.Contains(h.Library, "[delay: 30ms]") || len(h.Kinds) != 2 {
		t.Errorf("hello %+v: want the delay named and mutex, reentrant only", h)
	}
	if _, ok := adapter.WithDelay(adapter.NewMemory(0), 0).(adapter.Immediate); !ok {
		t.Error("WithDelay with no delay did not return the library as it was")
	}
	var stderr bytes.Buffer
	if code := adapter.MainNull([]string{"-delay", "-1ms"}, strings.NewReader(""), &bytes.Buffer{}, &stderr); code != 2 || !strings.Contains(stderr.String(), "negative") {
		t.Errorf("-delay -1ms: exit %d, %q", code, stderr.String())
	}
}
