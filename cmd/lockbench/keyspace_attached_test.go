package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/redis/rueidis"
)

// attachedPrefix is the --key-prefix of the runs against someone's server below: specific, as
// the refusal of the default prefix asks.
const attachedPrefix = "lockbench:bench:"

// unrelatedKeys are the names of the test's keys that are not lockbench's although they contain
// its prefix (the default one or attachedPrefix), or pass a SCAN MATCH glob of its shapes.
var unrelatedKeys = []string{
	"app:lockbench:x", "app:lockbench:cfg", "x{lockbench:1}", "mylockbench", "mylockbench:state",
	"lockbench:cfg", "lockbench:12abc", "cache:lockbench:42", "redisson_lock_queue:{other}",
	"app:lockbench:bench:x", "x{lockbench:bench:1}", "mylockbench:bench:", "{lockbench:bench:1}:cfg",
	"redisson_lock_queue:{lockbench:bench:x}", "redisson_lock_token:{lockbench:bench:01}",
	"redisson_lock_timeout:{lockbench:bench:1}:old", "redisson_unlock_latch:{lockbench:bench:1}",
	"rueidislock:x:lockbench:bench:1", "rueidislock:0:lockbench:bench:1:x", "redisson_lock__channel:{lockbench:bench:1}",
}

// keyState is what the test records of one key: its DUMP and its PTTL.
type keyState struct {
	dump string
	pttl int64
}

// fillUnrelated writes unrelatedKeys and 1,000 more, of every type (string, hash, list, set,
// zset, stream), each type half with a TTL of an hour, and returns the state of each.
func fillUnrelated(t *testing.T, c rueidis.Client) map[string]keyState {
	t.Helper()
	ctx := context.Background()
	names := slices.Clone(unrelatedKeys)
	for i := range 1000 {
		names = append(names, fmt.Sprintf("user:%d", i))
	}
	var cmds rueidis.Commands
	for i, k := range names {
		v := fmt.Sprintf("value %d", i)
		switch i % 6 {
		case 0:
			cmds = append(cmds, c.B().Set().Key(k).Value(v).Build())
		case 1:
			cmds = append(cmds, c.B().Hset().Key(k).FieldValue().FieldValue("owner:1", v).FieldValue("n", "1").Build())
		case 2:
			cmds = append(cmds, c.B().Rpush().Key(k).Element(v, "b").Build())
		case 3:
			cmds = append(cmds, c.B().Sadd().Key(k).Member(v, "b").Build())
		case 4:
			cmds = append(cmds, c.B().Zadd().Key(k).ScoreMember().ScoreMember(1, v).ScoreMember(2, "b").Build())
		case 5:
			cmds = append(cmds, c.B().Xadd().Key(k).Id("*").FieldValue().FieldValue("f", v).Build())
		}
		if (i/6)%2 == 1 { // every type, with and without a TTL
			cmds = append(cmds, c.B().Pexpire().Key(k).Milliseconds(3_600_000).Build())
		}
	}
	for _, r := range c.DoMulti(ctx, cmds...) {
		if err := r.Error(); err != nil {
			t.Fatal(err)
		}
	}
	return keyStates(t, c, names)
}

// keyStates reads DUMP and PTTL of keys; a key that is gone has an empty dump and PTTL -2.
func keyStates(t *testing.T, c rueidis.Client, keys []string) map[string]keyState {
	t.Helper()
	cmds := make(rueidis.Commands, 0, 2*len(keys))
	for _, k := range keys {
		cmds = append(cmds, c.B().Dump().Key(k).Build(), c.B().Pttl().Key(k).Build())
	}
	resps := c.DoMulti(context.Background(), cmds...)
	states := make(map[string]keyState, len(keys))
	for i, k := range keys {
		dump, err := resps[2*i].ToString()
		if err != nil && !rueidis.IsRedisNil(err) {
			t.Fatal(err)
		}
		pttl, err := resps[2*i+1].AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		states[k] = keyState{dump, pttl}
	}
	return states
}

// assertUntouched fails t unless every key of before still holds the same value (DUMP), keeps
// a TTL if it had one and gains none if it had none, and its TTL has not grown.
func assertUntouched(t *testing.T, c rueidis.Client, before map[string]keyState, step string) {
	t.Helper()
	keys := make([]string, 0, len(before))
	for k := range before {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	after := keyStates(t, c, keys)
	var changed []string
	for _, k := range keys {
		b, a := before[k], after[k]
		switch {
		case a.pttl == -2:
			changed = append(changed, k+" (deleted)")
		case a.dump != b.dump:
			changed = append(changed, k+" (value changed)")
		case (b.pttl == -1) != (a.pttl == -1) || a.pttl > b.pttl:
			changed = append(changed, fmt.Sprintf("%s (pttl %d, was %d)", k, a.pttl, b.pttl))
		}
	}
	if len(changed) > 0 {
		t.Fatalf("%s: %d of %d unrelated keys changed, first ones: %v", step, len(changed), len(keys), changed[:min(len(changed), 12)])
	}
}

// resultCleanups returns the keys the result file in dir says were removed before its runs and
// after the last, by pattern, read from the JSON itself.
func resultCleanups(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(paths) != 1 {
		t.Fatalf("want one result file in %s, found %v", dir, paths)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	type cleanup struct {
		Removed   int64            `json:"removed"`
		ByPattern map[string]int64 `json:"by_pattern"`
	}
	var f struct {
		Cleanup *cleanup `json:"cleanup"`
		Runs    []struct {
			Cleanup *cleanup `json:"cleanup"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	sum := map[string]int64{}
	all := []*cleanup{f.Cleanup}
	for _, r := range f.Runs {
		all = append(all, r.Cleanup)
	}
	for _, c := range all {
		if c == nil {
			continue
		}
		var n int64
		for p, k := range c.ByPattern {
			sum[p] += k
			n += k
		}
		if n != c.Removed {
			t.Errorf("cleanup %+v: removed %d, by pattern %d", c, c.Removed, n)
		}
	}
	return sum
}

// TestAttachedRunTouchesOnlyItsOwnKeys runs every driver and lock kind against a server full of
// someone else's keys — many containing the prefix, some passing the SCAN globs of lockbench's
// key shapes — and checks that none of them changed while lockbench's own keys are gone at the
// end; that a prefix too short or too generic, and keys of lockbench's shapes already there,
// are refused before anything runs; and that --clean-existing removes those keys, recorded in
// the result.
func TestAttachedRunTouchesOnlyItsOwnKeys(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t)
	addr := srv.Addrs()[0]
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: srv.Addrs(), DisableCache: true, ForceSingleClient: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	before := fillUnrelated(t, rdb)
	withTTL := 0
	for _, st := range before {
		if st.pttl > 0 {
			withTTL++
		}
	}
	if len(before) < 1000 || withTTL == 0 || withTTL == len(before) {
		t.Fatalf("%d unrelated keys, %d with a TTL: want at least 1,000, some with and some without", len(before), withTTL)
	}

	run := func(args ...string) (int, string, string) {
		t.Helper()
		dir := t.TempDir()
		errb := &syncBuffer{}
		// --allow-stalls: a loaded CI machine may leave a PING unanswered for a second; what this
		// test checks is the keys, not the server's pace.
		base := []string{"run", "--addr", addr, "--concurrency", "2", "--keys", "4", "--duration", "300ms", "--warmup", "0s", "--allow-stalls", "--out", dir}
		code, _ := finish(t, lockbench(t, errb, append(base, args...)...), errb)
		return code, errb.String(), dir
	}

	// Every built-in driver and the floor reference, and the Redisson profiles whose keys differ:
	// 3.52 names its unlock latch by the client id, 3.23 has none, the default (4.7) by request.
	all := "lockcore,lockcore-fair,lockcore-fenced,redisson,redisson:version=3.23,redisson:version=3.52,redisson-fair,redisson-fenced,redisson-spin,redsync,redislock,rueidislock,naive,floor"
	removed := map[string]int64{}
	for _, workload := range []string{"contention", "rw", "multilock", "reentrancy"} {
		code, stderr, dir := run("--key-prefix", attachedPrefix, "--workload", workload, "--driver", all)
		assertUntouched(t, rdb, before, workload)
		if code != exitOK {
			t.Fatalf("%s: exit %d, want 0\n%s", workload, code, stderr)
		}
		for p, n := range resultCleanups(t, dir) {
			removed[p] += n
		}
		// Drivers without the workload's lock kind are skipped; every other one ran and locked.
		f := readResult(t, dir)
		if len(f.Runs)+len(f.Skipped) != strings.Count(all, ",")+1 {
			t.Errorf("%s: %d runs and %d skipped, want %s", workload, len(f.Runs), len(f.Skipped), all)
		}
		for _, r := range f.Runs {
			if r.Acquisitions == 0 || r.Violations != 0 {
				t.Errorf("%s %s: %d acquisitions, %d violations", workload, r.Driver, r.Acquisitions, r.Violations)
			}
		}
	}
	// lockcore-fenced's token counters stay after its runs on purpose: the cleanup removed them.
	if removed["redisson_lock_token:{"+attachedPrefix+"<n>}"] == 0 {
		t.Errorf("cleanups recorded %v: want the fencing counters' pattern among them", removed)
	}

	for _, tc := range []struct {
		name string
		args []string
		want []string // on stderr
	}{
		{"short prefix", []string{"--key-prefix", "a"}, []string{"--key-prefix \"a\"", "3 characters"}},
		{"default prefix shared with the app", nil, []string{"lockbench:cfg", "--key-prefix"}},
		{"generic prefix", []string{"--key-prefix", "app"}, []string{"app:lockbench:x", "--key-prefix"}},
	} {
		code, stderr, _ := run(tc.args...)
		assertUntouched(t, rdb, before, tc.name)
		if code != exitUsage {
			t.Fatalf("%s: exit %d, want %d\n%s", tc.name, code, exitUsage, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", tc.name, w, stderr)
			}
		}
	}

	// Keys of lockbench's shapes left by someone else's run: reported, kept, the run refused;
	// removed with --clean-existing.
	stale := []string{attachedPrefix + "3", "redisson_lock_queue:{" + attachedPrefix + "1}"}
	for _, k := range stale {
		if err := rdb.Do(context.Background(), rdb.B().Rpush().Key(k).Element("someone").Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	staleBefore := keyStates(t, rdb, stale)
	code, stderr, _ := run("--key-prefix", attachedPrefix, "--driver", "lockcore")
	assertUntouched(t, rdb, before, "existing keys")
	assertUntouched(t, rdb, staleBefore, "existing keys")
	if code != exitUsage || !strings.Contains(stderr, stale[0]) || !strings.Contains(stderr, "--clean-existing") {
		t.Fatalf("existing keys of lockbench's shapes: exit %d, want %d naming %s and --clean-existing\n%s", code, exitUsage, stale[0], stderr)
	}
	code, stderr, dir := run("--key-prefix", attachedPrefix, "--driver", "lockcore", "--clean-existing")
	assertUntouched(t, rdb, before, "--clean-existing")
	if code != exitOK {
		t.Fatalf("--clean-existing: exit %d\n%s", code, stderr)
	}
	if got := resultCleanups(t, dir); got[attachedPrefix+"<n>"] < 1 || got["redisson_lock_queue:{"+attachedPrefix+"<n>}"] != 1 {
		t.Errorf("--clean-existing: cleanups %v, want the stale lock and queue among them", got)
	}

	// At the end only the unrelated keys are left: lockbench's own are gone.
	keys, err := rdb.Do(context.Background(), rdb.B().Keys().Pattern("*").Build()).AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	var extra []string
	for _, k := range keys {
		if _, ok := before[k]; !ok {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 || len(keys) != len(before) {
		t.Errorf("%d keys at the end, %d unrelated; not unrelated: %v", len(keys), len(before), extra)
	}
}
