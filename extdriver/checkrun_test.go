package extdriver_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/extdriver"
)

// TestCheckRunValidate: driver-check's argument and flags, refused before anything starts; a
// bare command is the adapter "adapter".
func TestCheckRunValidate(t *testing.T) {
	t.Parallel()
	ok := extdriver.CheckRun{Adapter: "/bin/adapter --fast", Duration: time.Second, Owners: 2}
	if got := ok.Spec(); got != "exec:adapter=/bin/adapter --fast" {
		t.Errorf("bare command: spec %q", got)
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid: %v", err)
	}
	named := ok
	named.Adapter = "exec:redis-py=/usr/bin/python3 adapters/redispy_lock.py"
	if named.Spec() != named.Adapter || named.Validate() != nil {
		t.Errorf("exec: spec %q: %v", named.Spec(), named.Validate())
	}
	for _, r := range []extdriver.CheckRun{
		{Adapter: "exec:", Duration: time.Second, Owners: 2},
		{Adapter: "/bin/a", Duration: 0, Owners: 2},
		{Adapter: "/bin/a", Duration: time.Second, Owners: 1},
	} {
		if err := r.Validate(); !errors.Is(err, extdriver.ErrBadCheck) || strings.HasPrefix(err.Error(), extdriver.ErrBadCheck.Error()) {
			t.Errorf("%+v: %v; want ErrBadCheck, its text alone", r, err)
		}
	}
}

// TestRunCheck: driver-check as the command runs it, on the test binary as the null adapter:
// with the Redis and referee it starts, every rule holds; against a lock that does not lock,
// the referee's violations are said after the rules; a bad --addr is bad input.
func TestRunCheck(t *testing.T) {
	t.Setenv(envSelf, "null") // the adapter processes inherit the environment
	t.Setenv(envFault, "")
	ctx, cancel := context.WithTimeout(context.Background(), 4*bound)
	defer cancel()
	var out bytes.Buffer
	fails, err := extdriver.RunCheck(ctx, extdriver.CheckRun{Adapter: os.Args[0], Duration: 500 * time.Millisecond, Owners: 4, Out: &out})
	if err != nil || len(fails) > 0 {
		t.Fatalf("null adapter: %v, %v\n%s", err, fails, out.String())
	}
	if !strings.Contains(out.String(), "ok   exclusion\n") || strings.Contains(out.String(), "referee:") {
		t.Errorf("null adapter:\n%s", out.String())
	}

	t.Setenv(envFault, "nolock")
	out.Reset()
	data, ref := redistest.NewServer(t), redistest.NewServer(t)
	fails, err = extdriver.RunCheck(ctx, extdriver.CheckRun{Adapter: "exec:nolock=" + os.Args[0], Addr: data.Addr(), Referee: ref.Addr(), Duration: 500 * time.Millisecond, Owners: 4, Out: &out})
	if err != nil || len(fails) == 0 || !strings.Contains(out.String(), "referee: ") || !strings.Contains(out.String(), "mutual-exclusion violations, e.g. ") {
		t.Errorf("a lock that does not lock: %v, %d failures\n%s", err, len(fails), out.String())
	}

	_, err = extdriver.RunCheck(ctx, extdriver.CheckRun{Adapter: os.Args[0], Addr: "redis://a b", Duration: time.Second, Owners: 2})
	if !errors.Is(err, extdriver.ErrBadCheck) || !strings.HasPrefix(err.Error(), "--addr: ") {
		t.Errorf("a bad --addr: %v", err)
	}
}
