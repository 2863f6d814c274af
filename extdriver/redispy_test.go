package extdriver_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/extdriver"
	"github.com/lockbench/lockbench/referee"
)

// python returns a python3 that imports redis (Debian's python3-redis is for /usr/bin/python3,
// which may not be the first python3 on PATH). Without one the test fails under CI (run
// scripts/install-deps.sh) and is skipped elsewhere.
func python(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import redis").Run() == nil {
			return p
		}
	}
	if v := os.Getenv("CI"); v == "true" || v == "1" {
		t.Fatal("no python3 with the redis module: run scripts/install-deps.sh (Debian's python3-redis)")
	}
	t.Skip("no python3 with the redis module: install python3-redis (scripts/install-deps.sh)")
	return ""
}

// TestRedisPyAdapter: adapters/redispy_lock.py passes driver-check on a real Redis, every
// holder marked on a referee.
func TestRedisPyAdapter(t *testing.T) {
	py := python(t)
	script, err := filepath.Abs("../adapters/redispy_lock.py")
	if err != nil {
		t.Fatal(err)
	}
	data, ref := redistest.NewServer(t), redistest.NewServer(t)
	r, err := referee.Open(t.Context(), referee.Options{Addr: ref.Addr(), RunID: "redispy-test", Process: "p"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out strings.Builder
	fails, err := extdriver.Check(t.Context(), extdriver.CheckOptions{
		Spec:   "exec:redis-py=" + py + " " + script,
		Config: drivers.Config{Topology: compose.KindSingle, Addrs: data.Addrs()}, Marker: r, Out: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(fails) != 0 {
		t.Fatalf("redis-py adapter fails driver-check:\n%s", out.String())
	}
	if res := r.Result(); res.Entries == 0 || res.Violations != 0 {
		t.Fatalf("referee: %+v", res)
	}
	if !strings.Contains(out.String(), "ok   lease-expiry") {
		t.Fatalf("lease expiry not checked:\n%s", out.String())
	}
}
