package results

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// HgrmTicksPerHalfDistance and HgrmValueScale are how WriteHgrm prints: 5
// percentile ticks per halving of the distance to 100%, as HdrHistogram's
// HistogramLogProcessor does by default, and values divided by 1000, from
// the histograms' microseconds to the milliseconds HdrHistogram's plotter
// labels them with.
const (
	HgrmTicksPerHalfDistance = 5
	HgrmValueScale           = 1000.0
)

// ErrNoTimeline is returned by WriteIntervalLog for a run without a timeline
// (a result file from before timelines, or a run that never measured).
var ErrNoTimeline = errors.New("no timeline in this run")

// WriteHgrm writes the run's acquire latency histogram as an HdrHistogram
// percentile distribution (.hgrm), exactly as hdrhistogram-go's
// PercentilesPrint prints it, values in milliseconds. It is safe for
// concurrent use with distinct writers.
func (r *Run) WriteHgrm(w io.Writer) error {
	h, err := decode(r.Histograms.Acquire)
	if err != nil {
		return fmt.Errorf("acquire histogram: %w", err)
	}
	bw := bufio.NewWriter(w)
	if _, err := h.PercentilesPrint(bw, HgrmTicksPerHalfDistance, HgrmValueScale); err != nil {
		return err
	}
	return bw.Flush()
}

// WriteIntervalLog writes the run's timeline as an HdrHistogram interval log
// (.hlog) with hdrhistogram-go's HistogramLogWriter: a format version, the
// phase's start time, a legend, then one line per timeline point with its
// start (seconds since the start time), length and acquire latency histogram.
// Values are microseconds, as in the result file; the writer puts the
// interval's max divided by 10^6 in the third column, so that column is in
// seconds (HdrHistogram's Java HistogramLogProcessor: -outputValueUnitRatio
// 1000 gives milliseconds). It returns ErrNoTimeline for a run without one.
// It is safe for concurrent use with distinct writers.
func (r *Run) WriteIntervalLog(w io.Writer) error {
	tl := r.Timeline
	if tl == nil {
		return ErrNoTimeline
	}
	bw := bufio.NewWriter(w)
	lw := hdrhistogram.NewHistogramLogWriter(bw)
	startMs := tl.Start.UnixMilli()
	// Timestamps relative to the start time: the reader takes them as such because they lie
	// far before it.
	lw.SetBaseTime(startMs)
	err := errors.Join(
		lw.OutputLogFormatVersion(),
		lw.OutputComment(fmt.Sprintf("[lockbench %s run of %s, round %d: acquire latency in microseconds, %gs intervals]",
			r.Workload, r.Driver, r.Round, tl.IntervalS)),
		lw.OutputStartTime(startMs),
		lw.OutputLegend(),
	)
	if err != nil {
		return err
	}
	for i, p := range tl.Points {
		h, err := decode(p.Histogram)
		if err != nil {
			return fmt.Errorf("timeline point %d: %w", i, err)
		}
		h.SetStartTimeMs(startMs + int64(p.StartS*1000+0.5))
		h.SetEndTimeMs(startMs + int64((p.StartS+p.DurationS)*1000+0.5))
		if err := lw.OutputIntervalHistogram(h); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// HDRFiles are the paths ExportHDR wrote for one run.
type HDRFiles struct {
	Run int // index in File.Runs
	// Hgrm is the percentile file; IntervalLog the interval log, empty when the run has no
	// timeline.
	Hgrm, IntervalLog string
}

// ExportHDR writes, for every run of f that measured something, a .hgrm
// percentile file and (when the run has a timeline) an .hlog interval log,
// named after the result file resultPath: X.json gives X-<driver>.hgrm, or
// X-<driver>-r<round>.hgrm when the file's drivers ran several rounds
// (File.Repeat > 1), and -<index in Runs> is added to a name already taken, in dir (resultPath's directory
// when dir is empty). Existing files of those names are replaced: they are
// derived data. It is safe for concurrent use with distinct paths.
func ExportHDR(resultPath, dir string, f *File) ([]HDRFiles, error) {
	if dir == "" {
		dir = filepath.Dir(resultPath)
	}
	base := strings.TrimSuffix(filepath.Base(resultPath), filepath.Ext(resultPath))
	var out []HDRFiles
	used := make(map[string]bool)
	for i := range f.Runs {
		r := &f.Runs[i]
		if r.Acquisitions <= 0 {
			continue
		}
		name := base + "-" + fileSafe(r.Driver)
		if r.Round > 0 && f.Repeat > 1 {
			name += "-r" + strconv.Itoa(r.Round)
		}
		if used[name] { // several cases in one file (merged results): the index tells them apart
			name += "-" + strconv.Itoa(i)
		}
		used[name] = true
		files := HDRFiles{Run: i, Hgrm: filepath.Join(dir, name+".hgrm")}
		if err := writeFileWith(files.Hgrm, r.WriteHgrm); err != nil {
			return out, err
		}
		if r.Timeline != nil {
			files.IntervalLog = filepath.Join(dir, name+".hlog")
			if err := writeFileWith(files.IntervalLog, r.WriteIntervalLog); err != nil {
				return out, err
			}
		}
		out = append(out, files)
	}
	return out, nil
}

func writeFileWith(path string, write func(io.Writer) error) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(fh); err != nil {
		fh.Close()
		os.Remove(path)
		return fmt.Errorf("%s: %w", path, err)
	}
	return fh.Close()
}

// fileSafe keeps only characters that are safe in file names on every OS.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}
