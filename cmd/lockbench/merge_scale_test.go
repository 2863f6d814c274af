package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
)

// scaleProcs is how many worker results TestMergeAtScale merges.
const scaleProcs = 200

// heapPeak samples the bytes of live heap objects until stop is called, and returns the
// largest sample. runtime/metrics reads them without stopping the world.
func heapPeak() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// liveHeap returns the live heap after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// workerResults writes n worker results made from one real result (collect/testdata, written
// by a lockbench worker run) as processes 0 to n-1 of one run, and returns their paths and the
// one result.
func workerResults(t *testing.T, n int) ([]string, *results.File) {
	t.Helper()
	one, err := results.ReadFile("../../collect/testdata/worker-result.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var paths []string
	for i := range n {
		r := &one.Runs[0]
		r.Fleet.Procs, r.Fleet.RunID, r.Fleet.Processes[0].Index = n, "scale", i
		p := filepath.Join(dir, fmt.Sprintf("proc-%03d.json", i))
		if err := results.WriteFileAt(p, one); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths, one
}

// measuredMerge merges paths as lockbench merge does (FileMerger.AddFiles, then the merged file written
// with its summary), and returns the merged file, the peak of the live heap above where it
// started, the live heap the merger keeps once it has every result, and the time it took.
func measuredMerge(t *testing.T, paths []string) (m *results.File, peak, kept uint64, took time.Duration) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "merged.json")
	base := liveHeap()
	stop := heapPeak()
	began := time.Now()
	g := results.NewFileMerger(version, nil)
	if err := g.AddFiles(paths); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	kept = liveHeap()
	kept -= min(base, kept)
	resumed := time.Now()
	merged, err := g.File()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := writeMerged(merged, out, nil, &stdout, &stderr); code != exitOK {
		t.Fatalf("merge: exit %d\n%s", code, stderr.String())
	}
	took = time.Since(began) - resumed.Sub(paused)
	peak = stop()
	peak -= min(base, peak)
	if m, err = results.ReadFile(out); err != nil {
		t.Fatal(err)
	}
	return m, peak, kept, took
}

// TestMergeAtScale merges 200 worker results as lockbench merge does and checks that the merge
// streams: from 20 results to 200, what the merger keeps grows by less than half of what
// holding the 180 more decoded results takes (measured the same way, after a collection, so
// the figures do not depend on when the GC ran) — a merge that kept every result would keep
// all of it — and the merged counts are exactly 200 times the one result's. It logs the
// peak heap and time for the README.
func TestMergeAtScale(t *testing.T) {
	// GOGC 10 keeps garbage near the live heap, so the peak samples measure what is live.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	small, _ := workerResults(t, scaleProcs/10)
	paths, one := workerResults(t, scaleProcs)
	base := liveHeap()
	var all []*results.File
	for _, p := range small {
		f, err := results.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, f)
	}
	held := liveHeap()
	runtime.KeepAlive(all)
	all = nil
	perResult := (held - min(base, held)) / uint64(len(small))

	_, _, keptSmall, _ := measuredMerge(t, small)
	m, peak, kept, took := measuredMerge(t, paths)
	more := uint64(scaleProcs - len(small))
	t.Logf("merge of %d results (%d KiB files): %v, peak heap +%.1f MiB, output written; "+
		"the merger keeps %.1f KiB per result (%.1f MiB after %d, %.1f MiB after %d); one result decoded and held: %.1f KiB",
		scaleProcs, fileSize(t, paths[0])/1024, took.Round(time.Millisecond), float64(peak)/(1<<20),
		float64(kept-min(kept, keptSmall))/float64(more)/1024, float64(kept)/(1<<20), scaleProcs, float64(keptSmall)/(1<<20), len(small),
		float64(perResult)/1024)
	if grew := kept - min(kept, keptSmall); grew*2 > more*perResult {
		t.Errorf("the merger keeps %d bytes more for %d more results, each %d bytes held: the merge does not stream", grew, more, perResult)
	}

	r, o := &m.Runs[0], &one.Runs[0]
	a, _, _, err := r.Histograms.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if !m.Complete || len(r.Fleet.Processes) != scaleProcs || r.Acquisitions != scaleProcs*o.Acquisitions || a.TotalCount() != r.Acquisitions {
		t.Errorf("merged: complete %v, %d processes, %d acquisitions (histogram %d); want %d processes of %d",
			m.Complete, len(r.Fleet.Processes), r.Acquisitions, a.TotalCount(), scaleProcs, o.Acquisitions)
	}
	if tl, _ := r.Timeline.Totals(); tl != r.Acquisitions {
		t.Errorf("merged timeline holds %d acquisitions, the run %d", tl, r.Acquisitions)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
