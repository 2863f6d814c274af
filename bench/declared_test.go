package bench

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
	"github.com/redis/rueidis"
)

// declaringAdapter is an adapter of one owner at a time (requests answered in order) whose
// locks live in its memory and whose hello declares the keys "{name}:tokens": the declared
// keys come from the test, which plays the library that left them.
const declaringAdapter = `import json, sys
held = {}
print("hello " + json.dumps({"protocol": 1, "library": "declaring test adapter", "version": "1", "kinds": ["mutex"], "keys": ["{name}:tokens"]}), flush=True)
for line in sys.stdin:
    f = line.split()
    if len(f) < 2:
        continue
    id, op = f[0], f[1]
    if op == "acquire":
        owner, name = f[2], f[3]
        ok = held.get(name) in (None, owner)
        if ok:
            held[name] = owner
        print(id, "ok" if ok else "timeout", flush=True)
    elif op == "release":
        owner, name = f[2], f[3]
        if held.get(name) == owner:
            del held[name]
            print(id, "ok", flush=True)
        else:
            print(id, "notowner", flush=True)
    elif op == "ping":
        print(id, "ok", flush=True)
    elif op != "cancel":
        print(id, "error unknown request", flush=True)
`

// An attached run's preflight starts an adapter for its hello, and its keys count as
// lockbench's: one already there is refused, then, with cleanExisting, deleted by the run's
// cleaning and recorded by its declared shape, while a lookalike of it (not the key of a lock
// name, or not this prefix's) is kept.
func TestAttachedRunCleansDeclaredKeys(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		if py, err = exec.LookPath("python3"); err != nil {
			t.Skip("no python3")
		}
	}
	script := filepath.Join(t.TempDir(), "adapter.py")
	if err := os.WriteFile(script, []byte(declaringAdapter), 0o600); err != nil {
		t.Fatal(err)
	}
	spec := "exec:declaring=" + py + " " + script
	const prefix = "lbd:"
	declared := prefix + "1:tokens"
	lookalikes := []string{"tokens:" + prefix + "1", "app:" + prefix + "1:tokens", "{" + prefix + "1}:tokens"}
	var rdb rueidis.Client
	tgt := attach(t, func(c rueidis.Client) {
		for _, k := range append([]string{declared, prefix + "1:tokens:x"}, lookalikes...) {
			do(t, c, "SET", k, "v")
		}
	}, "", "")
	rdb = tgt.Masters()[0].Client
	rep := &lines{}
	specs := []string{"lockcore", spec}
	// A key under the prefix that only looks like a declared one is someone else's: the prefix
	// is refused for it, and the declared key is not named among the foreign ones.
	_, err = CheckAttached(t.Context(), tgt, FaultCheck{}, prefix, specs, false, rep)
	if !errors.Is(err, ErrForeignKeys) || !strings.Contains(err.Error(), prefix+"1:tokens:x") || strings.Contains(err.Error(), declared+",") || strings.Contains(err.Error(), declared+")") {
		t.Fatalf("a lookalike under the prefix: %v; want ErrForeignKeys naming it alone", err)
	}
	do(t, rdb, "RENAME", prefix+"1:tokens:x", "app:"+prefix+"1:tokens:x")
	lookalikes = append(lookalikes, "app:"+prefix+"1:tokens:x")
	_, err = CheckAttached(t.Context(), tgt, FaultCheck{}, prefix, specs, false, rep)
	if !errors.Is(err, ErrKeysExist) || !strings.Contains(err.Error(), declared) {
		t.Fatalf("a declared key already there: %v; want ErrKeysExist naming %s", err, declared)
	}
	cleanup, err := CheckAttached(t.Context(), tgt, FaultCheck{}, prefix, specs, true, rep)
	if err != nil || cleanup == nil || cleanup.Existing != 1 || len(cleanup.Declared) != 1 || cleanup.Declared[0] != "{name}:tokens" {
		t.Fatalf("--clean-existing: %+v, %v; want one existing key and the declared pattern recorded", cleanup, err)
	}
	if !strings.Contains(rep.String(), "keys declared by an adapter: {name}:tokens") {
		t.Errorf("lines %q; want the declared keys said", rep)
	}
	cfg := workloads.Config{Concurrency: 1, Keys: 2, Duration: 200 * time.Millisecond, Warmup: -1, KeyPrefix: prefix}
	file := &results.File{Cleanup: cleanup}
	res, err := Run(t.Context(), tgt, Spec{Drivers: []string{spec}, Config: cfg}, Options{File: file})
	if err != nil || len(res.File.Runs) != 1 || res.File.Runs[0].Acquisitions == 0 {
		t.Fatalf("run: %v, %+v\n%s", err, res.File.Runs, rep)
	}
	if n, _ := rdb.Do(t.Context(), rdb.B().Exists().Key(declared).Build()).AsInt64(); n != 0 {
		t.Errorf("the declared key %s survived the run's cleaning", declared)
	}
	if got := file.Cleanup.ByPattern[prefix+"<n>:tokens"]; got != 1 {
		t.Errorf("cleanup %+v; want the declared key counted by its shape %s<n>:tokens", file.Cleanup, prefix)
	}
	for _, k := range lookalikes {
		if v, err := rdb.Do(t.Context(), rdb.B().Get().Key(k).Build()).ToString(); err != nil || v != "v" {
			t.Errorf("lookalike %s: %q, %v after the run; want it kept", k, v, err)
		}
	}
}
