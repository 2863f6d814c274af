package fleet

import (
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/crosscheck"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// fakeWorker is a generator process for RunShared's tests: args are its index, result path,
// arena path and what to do (FLEET_TEST_PLAN, one letter per index: "w" writes a result of
// index+1 acquisitions, "v" also counts a violation in the arena and then dies by SIGKILL, "s"
// writes a skip).
func fakeWorker(args []string) {
	index, _ := strconv.Atoi(args[0])
	output, arena, startAt := args[1], args[2], args[3]
	plan := os.Getenv("FLEET_TEST_PLAN")
	start, _ := time.Parse(time.RFC3339Nano, startAt)
	time.Sleep(time.Until(start))
	f := results.NewFile("test", nil)
	switch plan[index] {
	case 'v':
		a, err := crosscheck.Open(arena, 4)
		if err != nil {
			os.Exit(3)
		}
		a.Shared().Violations.Add(1)
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	case 's':
		f.Skipped = []results.Skip{{Driver: "d", Reason: "cannot"}}
	default:
		rec := results.NewRecorder()
		for range index + 1 {
			rec.Record(time.Millisecond, time.Millisecond, time.Millisecond)
		}
		r := results.Run{Driver: "d", Workload: "contention", Concurrency: 1, Keys: 4, KeyDist: "uniform", Complete: true, StartedAt: time.Now()}
		r.Fill(results.Merge(rec), time.Second)
		r.SetWorkerFairness(results.WorkerAcquisitions([]*results.Recorder{rec}))
		r.SetProcess(index, len(plan), start, "h", os.Getpid(), arena != "")
		f.Runs = []results.Run{r}
	}
	if err := results.WriteFileAt(output, f); err != nil {
		os.Exit(3)
	}
}

func runFakes(t *testing.T, plan string) (results.Run, []Exit, error) {
	t.Helper()
	dir := t.TempDir()
	defer func() {
		// The processes' result files and the arena are RunShared's to remove.
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("RunShared left %d files in its directory (%s)", len(entries), entries[0].Name())
		}
	}()
	return RunShared(context.Background(), Shared{
		Procs: Procs{Path: os.Args[0], N: len(plan), Env: []string{modeEnv + "=worker", "FLEET_TEST_PLAN=" + plan}},
		WorkerArgs: func(i int, startAt time.Time, output, arena string) []string {
			return []string{"-test.run=^$", strconv.Itoa(i), output, arena, startAt.Format(time.RFC3339Nano)}
		},
		Keys:       4,
		Dir:        dir,
		StartDelay: 300 * time.Millisecond,
	})
}

func TestRunSharedMergesAndCountsACrashedProcessViolations(t *testing.T) {
	run, exits, err := runFakes(t, "wvw")
	if err != nil {
		t.Fatal(err)
	}
	if !exits[1].Crashed() || exits[0].Err != nil || exits[2].Err != nil {
		t.Fatalf("exits %v: want process 1 crashed, the others ok", exits)
	}
	f := run.Fleet
	if run.Complete || !slices.Equal(f.Lost, []int{1}) || len(f.Processes) != 2 || !strings.Contains(run.Incomplete, "killed") {
		t.Errorf("complete %v lost %v processes %d reason %q: want process 1 lost, killed", run.Complete, f.Lost, len(f.Processes), run.Incomplete)
	}
	if run.Acquisitions != 1+3 {
		t.Errorf("merged %d acquisitions, want processes 0 and 2's 1+3", run.Acquisitions)
	}
	// The crashed process reported nothing, but its violation is in the shared memory.
	if f.SharedViolations != 1 || run.Violations != 1 || !f.CrossProcessChecker {
		t.Errorf("shared violations %d, run violations %d, cross-process %v: want the dead process's 1", f.SharedViolations, run.Violations, f.CrossProcessChecker)
	}
}

func TestRunSharedSkipsAndLosses(t *testing.T) {
	if _, _, err := runFakes(t, "ss"); !errors.Is(err, drivers.ErrUnsupported) || !strings.Contains(err.Error(), "cannot") {
		t.Errorf("every process skipped: %v, want ErrUnsupported with the reason", err)
	}
	if _, exits, err := runFakes(t, "vv"); !errors.Is(err, ErrAllLost) || !strings.Contains(err.Error(), "process 0") || len(exits) != 2 {
		t.Errorf("every process died: %v, want ErrAllLost naming them", err)
	}
}
