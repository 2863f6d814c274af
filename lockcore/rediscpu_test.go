package lockcore

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/rediscpu"
)

// Redis CPU per acquisition, by part (issue 40; docs/findings.md, "Where Redis's CPU goes"):
//
//	LOCKBENCH_REDISCPU=callgrind go test -count=1 -v -run 'TestRedisCPU' ./lockcore ./drivers
//
// starts a redis-server of its own under valgrind's callgrind and prints a table of the
// instructions Redis executes per command, per script call and per acquisition, for the
// primitives (PING, the hash commands, SET NX PX, DEL, PUBLISH), script shapes (an empty script,
// n redis.calls, n arguments) and lockcore's scripts at each batch size; ./drivers adds the
// Redisson path. LOCKBENCH_REDISCPU=cpu runs the same natively and prints Redis's CPU time per
// unit instead (loaded machines make that noisy: it is only for converting instructions to
// time). LOCKBENCH_REDISCPU_N sets the units per experiment (default 2048, a multiple of 64);
// LOCKBENCH_REDISCPU_KEEP=1 keeps the callgrind dumps for callgrind_annotate (internal/rediscpu).

// cpuLease and cpuField are an acquisition's lease and owner field as lockcore sends them.
const (
	cpuLease = "30000"
	cpuField = "5f0c3a1e-8d2b-4c6f-9a7e-1b2c3d4e5f60:7"
	// cpuDepth is the commands per pipeline of a deep experiment: enough that one read and one
	// write per pipeline are a small share of each command.
	cpuDepth = 500
)

func cpuName(i int) string { return "lockbench:" + strconv.Itoa(i) }

// each is one command per i in [0, n).
func each(n int, cmd func(i int) []string) [][]string {
	out := make([][]string, n)
	for i := range out {
		out[i] = cmd(i)
	}
	return out
}

// evalsha is an EVALSHA of sc with keys and args.
func evalsha(sc *script, keys []string, args ...string) []string {
	cmd := append([]string{"EVALSHA", sc.sha, strconv.Itoa(len(keys))}, keys...)
	return append(cmd, args...)
}

func load(scs ...*script) [][]string {
	var out [][]string
	for _, sc := range scs {
		out = append(out, []string{"SCRIPT", "LOAD", sc.body})
	}
	return out
}

// TestRedisCPUPrimitives measures single commands and script shapes: what one command costs,
// what one script call costs with nothing in it, and what each redis.call and each argument adds.
func TestRedisCPUPrimitives(t *testing.T) {
	e := rediscpu.StartFromEnv(t)
	n := e.Units
	hashes := each(n, func(i int) []string { return []string{"HSET", cpuName(i), cpuField, "1"} })
	strs := each(n, func(i int) []string { return []string{"SET", cpuName(i), "v"} })
	dels := each(n, func(i int) []string { return []string{"DEL", cpuName(i)} })
	onHash := func(name string, cmd func(i int) []string) rediscpu.Experiment {
		return rediscpu.Experiment{Name: name, Unit: "command", Units: n, Depth: cpuDepth,
			Setup: hashes, Body: each(n, cmd), Teardown: dels}
	}
	es := []rediscpu.Experiment{
		{Name: "PING", Unit: "command", Units: n, Depth: cpuDepth, Body: each(n, func(int) []string { return []string{"PING"} })},
		{Name: "PING", Unit: "command", Units: n, Depth: 1, Body: each(n, func(int) []string { return []string{"PING"} })},
		onHash("EXISTS (a hash)", func(i int) []string { return []string{"EXISTS", cpuName(i)} }),
		onHash("PTTL", func(i int) []string { return []string{"PTTL", cpuName(i)} }),
		onHash("HEXISTS", func(i int) []string { return []string{"HEXISTS", cpuName(i), cpuField} }),
		onHash("HGET", func(i int) []string { return []string{"HGET", cpuName(i), cpuField} }),
		onHash("HINCRBY +1", func(i int) []string { return []string{"HINCRBY", cpuName(i), cpuField, "1"} }),
		onHash("PEXPIRE", func(i int) []string { return []string{"PEXPIRE", cpuName(i), cpuLease} }),
		{Name: "HINCRBY on no key (makes the hash)", Unit: "command", Units: n, Depth: cpuDepth,
			Body: each(n, func(i int) []string { return []string{"HINCRBY", cpuName(i), cpuField, "1"} }), Teardown: dels},
		{Name: "DEL (a 1-field hash)", Unit: "command", Units: n, Depth: cpuDepth, Setup: hashes, Body: dels},
		{Name: "SET NX PX (no key)", Unit: "command", Units: n, Depth: cpuDepth,
			Body: each(n, func(i int) []string { return []string{"SET", cpuName(i), "v", "NX", "PX", cpuLease} }), Teardown: dels},
		{Name: "DEL (a string)", Unit: "command", Units: n, Depth: cpuDepth, Setup: strs, Body: dels},
		{Name: "PUBLISH, no subscriber", Unit: "command", Units: n, Depth: cpuDepth,
			Body: each(n, func(i int) []string { return []string{"PUBLISH", channelName(cpuName(i)), unlockMessage} })},
	}
	rs := e.RunAll(t, es)

	// PUBLISH to a channel with one subscriber, which a goroutine drains.
	sub, err := rediscpu.Dial(e.Addr)
	if err != nil {
		t.Fatal(err)
	}
	ch := channelName(cpuName(0))
	if _, err := sub.Do("SUBSCRIBE", ch); err != nil {
		t.Fatal(err)
	}
	drained := make(chan error, 1)
	go func() {
		for {
			if _, err := sub.Read(); err != nil {
				drained <- err
				return
			}
		}
	}()
	pub := rediscpu.Experiment{Name: "PUBLISH, 1 subscriber", Unit: "command", Units: n, Depth: cpuDepth,
		Body: each(n, func(int) []string { return []string{"PUBLISH", ch, unlockMessage} }),
		Check: func(_ []string, r any) error {
			if r != int64(1) {
				return fmt.Errorf("heard by %v, want 1", r)
			}
			return nil
		}}
	rs = append(rs, e.RunAll(t, []rediscpu.Experiment{pub})...)
	sub.Close()
	<-drained

	// Script shapes: an empty script, its arguments, and n redis.calls of EXISTS.
	empty := newScript("return 0")
	var shapes []rediscpu.Experiment
	for _, k := range []int{0, 1, 16, 64} {
		keys := make([]string, k)
		args := []string{"publish"}
		for i := range keys {
			keys[i] = cpuName(i)
			args = append(args, "l", cpuLease, cpuField)
		}
		if k == 0 {
			args = nil
		}
		shapes = append(shapes, rediscpu.Experiment{
			Name: fmt.Sprintf("EVALSHA `return 0`, %d keys %d args", len(keys), len(args)), Unit: "call", Units: n, Depth: cpuDepth,
			Setup: load(empty), Body: each(n, func(int) []string { return evalsha(empty, keys, args...) })})
	}
	for _, k := range []int{1, 2, 3, 5} {
		for _, fn := range []string{"call", "pcall"} {
			if fn == "pcall" && k != 5 {
				continue
			}
			sc := newScript(strings.Repeat("redis."+fn+"('exists', KEYS[1])\n", k) + "return 0")
			shapes = append(shapes, rediscpu.Experiment{
				Name: fmt.Sprintf("EVALSHA %d × redis.%s EXISTS", k, fn), Unit: "call", Units: n, Depth: cpuDepth,
				Setup: append(load(sc), hashes...), Teardown: dels,
				Body: each(n, func(i int) []string { return evalsha(sc, []string{cpuName(i)}) })})
		}
	}
	// A number argument to redis.call is formatted by the server on every call (see batchScript).
	for _, one := range []string{"1", "'1'"} {
		sc := newScript("redis.call('hincrby', KEYS[1], ARGV[1], " + one + ")\nreturn 0")
		shapes = append(shapes, rediscpu.Experiment{
			Name: "EVALSHA 1 × redis.call HINCRBY, count " + one, Unit: "call", Units: n, Depth: cpuDepth,
			Setup: append(load(sc), hashes...), Teardown: dels,
			Body: each(n, func(i int) []string { return evalsha(sc, []string{cpuName(i)}, cpuField) })})
	}
	rs = append(rs, e.RunAll(t, shapes)...)
	if len(rs) == 0 {
		t.Fatal("no experiment ran")
	}
}

// lockcoreOps is one batchScript call of op on names[from:to], or the single script of op when
// the batch holds one.
func lockcoreOps(op string, from, to int, field string) []string {
	if to-from == 1 {
		name := cpuName(from)
		switch op {
		case "l":
			return evalsha(lockScript, []string{name}, cpuLease, field)
		case "u":
			return evalsha(unlockScript, []string{name, channelName(name)}, unlockMessage, cpuLease, field, "publish")
		default:
			return evalsha(renewScript, []string{name}, cpuLease, field)
		}
	}
	keys := make([]string, 0, to-from)
	var ops []string
	for i := from; i < to; i++ {
		keys = append(keys, cpuName(i))
		ops = append(ops, op, cpuLease, field)
	}
	return evalsha(batchScript, keys, batchArgs(false, "publish", ops...)...)
}

// lockcoreCalls is n operations op in calls of batch.
func lockcoreCalls(op string, n, batch int, field string) [][]string {
	var out [][]string
	for from := 0; from < n; from += batch {
		out = append(out, lockcoreOps(op, from, from+batch, field))
	}
	return out
}

// acquisitions interleaves lock and unlock calls of batch: each name is locked and released once.
func acquisitions(n, batch int) [][]string {
	var out [][]string
	for from := 0; from < n; from += batch {
		out = append(out, lockcoreOps("l", from, from+batch, cpuField), lockcoreOps("u", from, from+batch, cpuField))
	}
	return out
}

// wantEach checks that every operation of a lockcore call answered want (nil: a grant).
func wantEach(want any) func([]string, any) error {
	return func(cmd []string, r any) error {
		if a, ok := r.([]any); ok {
			for i, e := range a {
				if e != want {
					return fmt.Errorf("operation %d answered %v, want %v", i, e, want)
				}
			}
			return nil
		}
		if r != want {
			return fmt.Errorf("answered %v, want %v", r, want)
		}
		return nil
	}
}

// grantedAndReleased accepts a lock call's grants (nil) and an unlock call's releases (1).
func grantedAndReleased(cmd []string, r any) error {
	if cmd[1] == unlockScript.sha || (cmd[1] == batchScript.sha && batchOpcodes(cmd)[0] == 'u') {
		return wantEach(int64(1))(cmd, r)
	}
	return wantEach(nil)(cmd, r)
}

// TestRedisCPULockcore measures lockcore's scripts per acquisition (a lock and its release on a
// free name, W1's common case) at each batch size, each half alone, a failed attempt, renewals,
// and the floor (SET NX PX + DEL) beside them.
func TestRedisCPULockcore(t *testing.T) {
	e := rediscpu.StartFromEnv(t)
	n := e.Units
	scripts := load(lockScript, unlockScript, renewScript, batchScript)
	dels := each(n, func(i int) []string { return []string{"DEL", cpuName(i)} })
	floor := make([][]string, 0, 2*n)
	for i := range n {
		floor = append(floor, []string{"SET", cpuName(i), "v", "NX", "PX", cpuLease}, []string{"DEL", cpuName(i)})
	}
	es := []rediscpu.Experiment{
		{Name: "floor: SET NX PX + DEL", Unit: "acquisition", Units: n, Depth: cpuDepth, Body: floor},
		{Name: "floor: SET NX PX + DEL", Unit: "acquisition", Units: n, Depth: 1, Body: floor},
	}
	for _, b := range []int{1, 2, 4, 8, 16, 32, 64} {
		es = append(es, rediscpu.Experiment{Name: fmt.Sprintf("lockcore lock + unlock, batch %d", b), Unit: "acquisition",
			Units: n, Depth: cpuDepth, Setup: scripts, Body: acquisitions(n, b), Check: grantedAndReleased})
	}
	es = append(es, rediscpu.Experiment{Name: "lockcore lock + unlock, batch 16", Unit: "acquisition",
		Units: n, Depth: 1, Setup: scripts, Body: acquisitions(n, 16), Check: grantedAndReleased})
	for _, b := range []int{1, 16} {
		locks, unlocks := lockcoreCalls("l", n, b, cpuField), lockcoreCalls("u", n, b, cpuField)
		es = append(es,
			rediscpu.Experiment{Name: fmt.Sprintf("lockcore lock alone, batch %d", b), Unit: "operation", Units: n, Depth: cpuDepth,
				Setup: scripts, Body: locks, Teardown: dels, Check: wantEach(nil)},
			rediscpu.Experiment{Name: fmt.Sprintf("lockcore unlock alone, batch %d", b), Unit: "operation", Units: n, Depth: cpuDepth,
				Setup: slices.Concat(scripts, locks), Body: unlocks, Check: wantEach(int64(1))},
			rediscpu.Experiment{Name: fmt.Sprintf("lockcore failed attempt (held by another), batch %d", b), Unit: "operation", Units: n,
				Depth: cpuDepth, Setup: slices.Concat(scripts, locks), Teardown: unlocks,
				Body: lockcoreCalls("l", n, b, cpuField+"0"),
				Check: func(_ []string, r any) error {
					for _, e := range append([]any{r}, asSlice(r)...) {
						if e == nil {
							return fmt.Errorf("a held lock was granted to another owner")
						}
					}
					return nil
				}},
			rediscpu.Experiment{Name: fmt.Sprintf("lockcore renewal, batch %d", b), Unit: "operation", Units: n, Depth: cpuDepth,
				Setup: slices.Concat(scripts, locks), Body: lockcoreCalls("r", n, b, cpuField), Teardown: unlocks,
				Check: wantEach(int64(1))})
	}
	e.RunAll(t, es)
}

// batchOpcodes is the opcodes argument (ARGV[2]) of a batchScript EVALSHA command.
func batchOpcodes(cmd []string) string {
	keys, _ := strconv.Atoi(cmd[2])
	return cmd[3+keys+1]
}

func asSlice(r any) []any {
	a, _ := r.([]any)
	return a
}
