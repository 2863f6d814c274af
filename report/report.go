package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/results"
	"gonum.org/v1/plot/vg"
)

// Default chart size in CSS pixels (the PNGs' size at DPI).
const (
	DefaultWidth  = 960
	DefaultHeight = 540
)

// MaxSize is the largest chart side Build draws, in pixels: a PNG of 4000×4000 is 64 MB in
// memory while it is drawn.
const MaxSize = 4000

// HTMLName is the name of the page in the directory WriteFiles writes.
const HTMLName = "index.html"

// Source is one result file to report on. It is a plain value.
type Source struct {
	// Name tells the file's runs apart from other files' in a report of several files (the
	// file's base name, say); it may be empty for a report of one file.
	Name string
	File *results.File
}

// Options say how Build draws. The zero value is valid: every zero field takes its default.
type Options struct {
	// Title heads the page; default "lockbench report".
	Title string
	// Width and Height are each chart's size in CSS pixels; default DefaultWidth and
	// DefaultHeight. Values are kept within 200 to MaxSize pixels.
	Width, Height int
}

// Report is what Build made: charts and tables, ready to write. It is not safe for
// concurrent use.
type Report struct {
	Title string
	// Charts in page order.
	Charts []*Chart
	// Notes are things the page says outside the charts: runs that measured nothing, files
	// without timelines.
	Notes []string

	groups  []*group
	sources []Source
	sweeps  []*sweepView
}

// group is the repetitions of one driver on one case in one source, with a label that tells
// it apart from the report's other groups.
type group struct {
	results.Group
	label string
	src   int
}

// Build makes the report of the sources' runs. It reads only what is in the files: a file
// with no runs (every driver skipped), runs that measured nothing (interrupted early) and
// files from before timelines and topologies give fewer charts and a note, not an error. An
// error means a histogram did not decode, which results.Decode has already ruled out for
// files read with it. It is safe for concurrent use with distinct sources.
func Build(sources []Source, opts Options) (*Report, error) {
	if opts.Title == "" {
		opts.Title = "lockbench report"
	}
	if opts.Width == 0 {
		opts.Width = DefaultWidth
	}
	if opts.Height == 0 {
		opts.Height = DefaultHeight
	}
	opts.Width, opts.Height = min(max(opts.Width, 200), MaxSize), min(max(opts.Height, 200), MaxSize)
	r := &Report{Title: opts.Title, sources: sources}
	for i, s := range sources {
		if s.File == nil {
			return nil, fmt.Errorf("source %d (%s): no file", i, s.Name)
		}
		steps := make(map[int]bool)
		if sw := s.File.Sweep; sw != nil {
			r.sweeps = append(r.sweeps, newSweepView(i, s, sw))
			steps = stepRuns(sw)
		}
		var runs []results.Run
		for j, run := range s.File.Runs {
			if !steps[j] {
				runs = append(runs, run)
			}
		}
		for _, g := range results.GroupRuns(runs) {
			r.groups = append(r.groups, &group{Group: g, src: i})
		}
	}
	r.labelGroups()

	size := func(c *Chart) *Chart {
		c.width = vg.Length(opts.Width) * vg.Inch / DPI
		c.height = vg.Length(opts.Height) * vg.Inch / DPI
		return c
	}
	ids := make(map[string]int)
	add := func(c *Chart, err error) error {
		if err != nil {
			return err
		}
		if c == nil {
			return nil
		}
		// Driver names that differ only in characters unsafe in file names (lockcore:a=1,
		// lockcore:a_1) would share a file.
		if ids[c.ID]++; ids[c.ID] > 1 {
			c.ID += "-" + strconv.Itoa(ids[c.ID])
		}
		r.Charts = append(r.Charts, size(c))
		return nil
	}
	if err := add(spectrumChart("spectrum", "Acquire latency by percentile", r.groups)); err != nil {
		return nil, err
	}
	for _, sv := range r.sweeps {
		c, err := sv.chart(r.sweepID(sv, "sweep"))
		if err := add(c, err); err != nil {
			return nil, err
		}
		for _, d := range sv.drivers {
			c, err := sv.spectrum(r.sweepID(sv, "sweep-spectrum-"+fileSafe(d.Driver)), d)
			if err := add(c, err); err != nil {
				return nil, err
			}
		}
	}
	if err := add(roundsChart(r.groups)); err != nil {
		return nil, err
	}
	tput, p99 := timelineCharts(r.groups)
	if err := errors.Join(add(tput, nil), add(p99, nil)); err != nil {
		return nil, err
	}
	r.notes()
	return r, nil
}

// sweepID names a sweep's chart, with the source's index when the report has several sweeps.
func (r *Report) sweepID(sv *sweepView, base string) string {
	if len(r.sweeps) > 1 {
		return base + "-" + strconv.Itoa(sv.src+1)
	}
	return base
}

// labelGroups labels every group with its driver, then with what tells it apart from the
// other groups: the case labels whose values differ between groups ("concurrency=64"), and
// the source's name when there are several sources. "(incomplete)" marks groups with runs
// that did not finish.
func (r *Report) labelGroups() {
	differ := make(map[string]bool)
	first := make(map[string]string)
	for _, g := range r.groups {
		for _, l := range g.Case() {
			if v, ok := first[l.Name]; !ok {
				first[l.Name] = l.Value
			} else if v != l.Value {
				differ[l.Name] = true
			}
		}
	}
	for _, g := range r.groups {
		parts := []string{g.Driver()}
		for _, l := range g.Case() {
			if differ[l.Name] {
				parts = append(parts, shortLabel(l.Name)+"="+l.Value)
			}
		}
		if len(r.sources) > 1 && r.sources[g.src].Name != "" {
			parts = append([]string{r.sources[g.src].Name + ":"}, parts...)
		}
		if g.Incomplete > 0 {
			parts = append(parts, "(incomplete)")
		}
		g.label = strings.Join(parts, " ")
	}
}

// shortLabel shortens the case labels that are long in a legend.
func shortLabel(name string) string {
	switch name {
	case "concurrency":
		return "conc"
	case "key_dist":
		return "dist"
	}
	return name
}

// notes says what the charts leave out, so that a missing chart is explained.
func (r *Report) notes() {
	for i, s := range r.sources {
		name := s.Name
		if name == "" {
			name = "the result file"
		}
		if len(s.File.Runs) == 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%s has no runs (%d skipped).", name, len(s.File.Skipped)))
		}
		if !s.File.Complete {
			r.Notes = append(r.Notes, fmt.Sprintf("%s is incomplete (interrupted or failed part way): it shows what was measured.", name))
		}
		for _, g := range r.groups {
			if g.src == i && g.Measured == 0 {
				r.Notes = append(r.Notes, fmt.Sprintf("%s measured nothing: it is in no chart.", g.label))
			}
		}
	}
}

// WriteFiles writes the page (HTMLName) and one PNG per chart (ID.png) into dir, which must
// exist, and returns the paths written, the page first. Files of those names are replaced.
func (r *Report) WriteFiles(dir string) ([]string, error) {
	var written []string
	page := filepath.Join(dir, HTMLName)
	if err := writeFile(page, r.WriteHTML); err != nil {
		return written, err
	}
	written = append(written, page)
	for _, c := range r.Charts {
		path := filepath.Join(dir, c.ID+".png")
		if err := writeFile(path, c.WritePNG); err != nil {
			return written, err
		}
		written = append(written, path)
	}
	return written, nil
}

// CheckDir creates dir if needed and checks that a file can be written in it, so that a
// command finds out before it does any work.
func CheckDir(dir string) error {
	if dir == "" {
		return errors.New("no directory given")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".lockbench-report-*.tmp")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// fileSafe keeps only characters that are safe in file names and HTML ids.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}
