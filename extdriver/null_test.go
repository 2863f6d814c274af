package extdriver_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/extdriver"
)

// TestWithNull: the null row joins external drivers, once, only when the program has the null
// adapter built in; exec:null without it is a clear bad option.
func TestWithNull(t *testing.T) {
	py := "exec:redis-py=python3 adapters/redispy_lock.py"
	extdriver.SetNullCommand(nil)
	if got := extdriver.WithNull([]string{"lockcore", py}); len(got) != 2 {
		t.Errorf("without a built-in null adapter: %q; want the specs as they are", got)
	}
	if _, err := extdriver.ParseSpec(extdriver.NullSpec); !errors.Is(err, drivers.ErrBadOption) {
		t.Errorf("exec:null without a built-in null adapter: %v; want ErrBadOption", err)
	}
	builtinNull(t)
	for _, c := range []struct {
		specs, want []string
	}{
		{[]string{"lockcore", py}, []string{"lockcore", py, "exec:null"}},
		{[]string{"lockcore", "redsync"}, []string{"lockcore", "redsync"}},
		{[]string{py, "exec:null"}, []string{py, "exec:null"}},
		{[]string{py, "exec:null=/tmp/null-adapter"}, []string{py, "exec:null=/tmp/null-adapter"}},
	} {
		in := slices.Clone(c.specs)
		if got := extdriver.WithNull(in); !slices.Equal(got, c.want) || !slices.Equal(in, c.specs) {
			t.Errorf("WithNull(%q) = %q (input now %q); want %q, the input untouched", c.specs, got, in, c.want)
		}
	}
	s, err := extdriver.ParseSpec(extdriver.NullSpec)
	if err != nil || s.Name != extdriver.NullName || !slices.Equal(s.Argv, []string{os.Args[0]}) {
		t.Fatalf("ParseSpec(exec:null) = %+v, %v; want the built-in command", s, err)
	}
	d, err := drivers.Parse(extdriver.NullSpec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	l, err := d.Open(ctx, drivers.Config{Addrs: []string{"127.0.0.1:1"}, Needs: drivers.KindRW})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	w := l.NewWorker().(drivers.RWWorker)
	if err := w.RLock(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if err := w.RUnlock(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("clean shutdown: %v", err)
	}
}
