package drivers

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/lockbench/lockbench/internal/rediscpu"
)

// TestRedisCPURedisson measures the Redis instructions of one Redisson acquisition as the
// redisson driver sends it on a single server, per profile: 4.7 (EVALSHA of the lock script, the
// unlock script with its latch key, then DEL of the latch) and 3.23 (EVAL with the body, no
// latch). It runs beside lockcore's experiments (lockcore/rediscpu_test.go, which says how):
//
//	LOCKBENCH_REDISCPU=callgrind go test -count=1 -v -run 'TestRedisCPU' ./lockcore ./drivers
func TestRedisCPURedisson(t *testing.T) {
	e := rediscpu.StartFromEnv(t)
	n := e.Units
	const lease, field, latchPX = "30000", "5f0c3a1e-8d2b-4c6f-9a7e-1b2c3d4e5f60:7", "18000"
	name := func(i int) string { return "lockbench:" + strconv.Itoa(i) }
	latch := func(i int) string { return redissonUnlockLatchName(name(i), fmt.Sprintf("%032x", i)) }
	eval := func(sc *redissonScript, sha bool, keys []string, args ...string) []string {
		cmd := []string{"EVAL", sc.body}
		if sha {
			cmd = []string{"EVALSHA", sc.sha}
		}
		cmd = append(cmd, strconv.Itoa(len(keys)))
		return append(append(cmd, keys...), args...)
	}
	lock := func(i int, sha bool) []string { return eval(rsLock, sha, []string{name(i)}, lease, field) }
	unlock47 := func(i int) []string {
		return eval(rsUnlockLatched, true, []string{name(i), redissonChannelName(name(i)), latch(i)},
			redissonUnlockMessage, lease, field, "publish", latchPX)
	}
	load := [][]string{{"SCRIPT", "LOAD", rsLock.body}, {"SCRIPT", "LOAD", rsUnlockLatched.body}}
	var v47, v323, locks, unlocks, latchDels [][]string
	for i := range n {
		v47 = append(v47, lock(i, true), unlock47(i), []string{"DEL", latch(i)})
		v323 = append(v323, lock(i, false),
			eval(rsUnlock, false, []string{name(i), redissonChannelName(name(i))}, redissonUnlockMessage, lease, field, "publish"))
		locks = append(locks, lock(i, true))
		unlocks = append(unlocks, unlock47(i))
		latchDels = append(latchDels, []string{"DEL", latch(i)})
	}
	// Every lock is granted (nil) and every unlock releases (1); a latch DEL deletes one key.
	check := func(cmd []string, r any) error {
		want := any(nil)
		switch {
		case cmd[0] == "DEL":
			want = int64(1)
		case cmd[1] != rsLock.sha && cmd[1] != rsLock.body:
			want = int64(1)
		}
		if r != want {
			return fmt.Errorf("answered %v, want %v", r, want)
		}
		return nil
	}
	e.RunAll(t, []rediscpu.Experiment{
		{Name: "Redisson 4.7: lock + latched unlock + DEL latch", Unit: "acquisition", Units: n, Depth: 500,
			Setup: load, Body: v47, Check: check},
		{Name: "Redisson 4.7: lock alone", Unit: "operation", Units: n, Depth: 500,
			Setup: load, Body: locks, Teardown: append(unlocks, latchDels...), Check: check},
		{Name: "Redisson 4.7: latched unlock alone", Unit: "operation", Units: n, Depth: 500,
			Setup: append(load, locks...), Body: unlocks, Teardown: latchDels, Check: check},
		{Name: "Redisson 3.23: EVAL lock + EVAL unlock", Unit: "acquisition", Units: n, Depth: 500,
			Body: v323, Check: check},
	})
}
