package results

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// timelineRun records from several goroutines while a timeline samples every 10ms, and returns
// the filled run with its timeline.
func timelineRun(t *testing.T) Run {
	t.Helper()
	recs := []*Recorder{NewRecorder(), nil, NewRecorder(), NewRecorder()}
	tr := NewTimelineRecorder(recs, 10*time.Millisecond)
	tr.Start()
	var wg sync.WaitGroup
	for w, rec := range recs {
		if rec == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 3000 {
				d := time.Duration(1+(i*7+w)%900) * time.Microsecond
				rec.Record(d, d/2, 2*d)
				if i%250 == 0 {
					rec.Error("acquire")
				}
				if i%300 == 0 {
					time.Sleep(5 * time.Millisecond) // spread the records over several intervals
				}
			}
		}()
	}
	wg.Wait()
	tl, err := tr.Stop()
	if err != nil {
		t.Fatal(err)
	}
	r := Run{Driver: "lockcore", Workload: "contention", Round: 2, Complete: true}
	if err := r.Fill(Merge(recs...), 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	r.Timeline = tl
	return r
}

func TestTimelineAddsUpToTheRun(t *testing.T) {
	r := timelineRun(t)
	tl := r.Timeline
	if len(tl.Points) < 3 {
		t.Fatalf("%d points; want the records spread over several 10ms intervals", len(tl.Points))
	}
	acq, errs := tl.Totals()
	if acq != r.Acquisitions || acq != 9000 || errs != r.Errors || errs != 36 {
		t.Errorf("points add up to %d acquisitions and %d errors; the run has %d and %d (want 9000, 36)", acq, errs, r.Acquisitions, r.Errors)
	}
	merged := newHistogram()
	var end float64
	for i, p := range tl.Points {
		if p.StartS != end {
			t.Errorf("point %d starts at %v, the previous ended at %v", i, p.StartS, end)
		}
		end = p.StartS + p.DurationS
		h, err := decode(p.Histogram)
		if err != nil {
			t.Fatalf("point %d: %v", i, err)
		}
		if h.TotalCount() != p.Acquisitions {
			t.Errorf("point %d: histogram count %d, acquisitions %d", i, h.TotalCount(), p.Acquisitions)
		}
		if p.Acquisitions > 0 && (p.AcquireP99US != float64(h.ValueAtQuantile(99)) || p.AcquireMaxUS != float64(h.Max())) {
			t.Errorf("point %d: p99 %v max %v, histogram says %v %v", i, p.AcquireP99US, p.AcquireMaxUS, h.ValueAtQuantile(99), h.Max())
		}
		merged.Merge(h)
	}
	if last := tl.Points[len(tl.Points)-1]; last.Acquisitions == 0 && last.Errors == 0 && last.DurationS < tl.IntervalS/2 {
		t.Errorf("the timeline ends with an empty sliver %+v", last)
	}
	acquire, _, _, _ := r.Histograms.Decode()
	if !merged.Equals(acquire) {
		t.Errorf("the points' histograms merged differ from the run's acquire histogram")
	}
}

// TestHgrmIsHdrHistogramsPrinter: the .hgrm file is byte for byte what hdrhistogram-go's
// PercentilesPrint prints for the run's acquire histogram.
func TestHgrmIsHdrHistogramsPrinter(t *testing.T) {
	r := timelineRun(t)
	var got bytes.Buffer
	if err := r.WriteHgrm(&got); err != nil {
		t.Fatal(err)
	}
	h, err := hdrhistogram.Decode([]byte(r.Histograms.Acquire))
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if _, err := h.PercentilesPrint(&want, 5, 1000.0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf(".hgrm differs from PercentilesPrint:\n%s\nwant:\n%s", got.String(), want.String())
	}
	if !bytes.HasPrefix(got.Bytes(), []byte(" Value\tPercentile\tTotalCount\t1/(1-Percentile)\n\n")) {
		t.Errorf("unexpected header: %q", got.String()[:60])
	}
	if !bytes.Contains(got.Bytes(), []byte("Total count    =         9000]")) {
		t.Errorf("footer lacks the total count:\n%s", got.String())
	}
}

// TestIntervalLogReadsBack: hdrhistogram-go's log reader reads the .hlog back, one histogram
// per timeline point, with the points' counts and times, adding up to the run.
func TestIntervalLogReadsBack(t *testing.T) {
	r := timelineRun(t)
	var buf bytes.Buffer
	if err := r.WriteIntervalLog(&buf); err != nil {
		t.Fatal(err)
	}
	rd := hdrhistogram.NewHistogramLogReader(&buf)
	var total int64
	n := 0
	startSec := float64(r.Timeline.Start.Unix())
	for {
		h, err := rd.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		if n >= len(r.Timeline.Points) {
			t.Fatalf("more histograms in the log than points (%d)", len(r.Timeline.Points))
		}
		p := r.Timeline.Points[n]
		if h.TotalCount() != p.Acquisitions {
			t.Errorf("interval %d: count %d, point has %d", n, h.TotalCount(), p.Acquisitions)
		}
		// The reader puts the interval at StartTime (whole seconds) + its offset.
		if got, want := float64(h.StartTimeMs())/1000, startSec+p.StartS; got < want-0.002 || got > want+0.002 {
			t.Errorf("interval %d starts at %v, want %v", n, got, want)
		}
		total += h.TotalCount()
		n++
	}
	if n != len(r.Timeline.Points) || total != r.Acquisitions {
		t.Errorf("read %d intervals with %d values; the run has %d points and %d acquisitions", n, total, len(r.Timeline.Points), r.Acquisitions)
	}

	if err := (&Run{}).WriteIntervalLog(io.Discard); err != ErrNoTimeline {
		t.Errorf("a run without a timeline: %v, want ErrNoTimeline", err)
	}
}

func TestExportHDR(t *testing.T) {
	dir := t.TempDir()
	r1 := timelineRun(t)
	r0 := r1
	r0.Round, r0.Driver, r0.Timeline = 0, "naive/v2", nil // an old run: no timeline; a name to clean
	f := NewFile("test", nil)
	f.Repeat = 2
	f.Runs = []Run{r1, r0, {Driver: "skipped"}, r1}
	path, err := WriteFile(dir, f)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	files, err := ExportHDR(path, "", back)
	if err != nil {
		t.Fatal(err)
	}
	base := path[:len(path)-len(".json")]
	want := []HDRFiles{
		{0, base + "-lockcore-r2.hgrm", base + "-lockcore-r2.hlog"},
		{1, base + "-naive_v2.hgrm", ""},
		{3, base + "-lockcore-r2-3.hgrm", base + "-lockcore-r2-3.hlog"},
	}
	if len(files) != len(want) {
		t.Fatalf("files %+v, want %+v", files, want)
	}
	for i, w := range want {
		if files[i] != w {
			t.Errorf("files[%d] = %+v, want %+v", i, files[i], w)
		}
		for _, p := range []string{w.Hgrm, w.IntervalLog} {
			if p == "" {
				continue
			}
			if st, err := os.Stat(p); err != nil || st.Size() == 0 {
				t.Errorf("%s: %v", p, err)
			}
		}
	}
	other := t.TempDir()
	files, err = ExportHDR(path, other, back)
	if err != nil || filepath.Dir(files[0].Hgrm) != other {
		t.Errorf("export into another directory: %+v, %v", files, err)
	}
}
