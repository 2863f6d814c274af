package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
	// Name names the file in the page's configuration tables (its base name, say); it may be
	// empty for a report of one file.
	Name string
	// Label tells the file's runs apart from other files' in the charts: "BASE" and "NEW",
	// "v1.2" and "v1.3" (see ParseSpec). Sources of one label are one set: their runs of one
	// driver and case pool, as the rounds of one run do. Empty: the source is a set of its
	// own, labelled by Name.
	Label string
	File  *results.File
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
	// colors is each driver's palette index; variants the groups' variants in the order of
	// their dash patterns.
	colors   map[string]int
	variants []string
	// width is the charts' width, which the bars' width depends on.
	width vg.Length
	// differ are the case fields whose values differ between the groups, by name.
	differ []string
	// compare is the BASE/NEW section of a comparison's page (BuildCompare); nil otherwise.
	compare *compareView
}

// group is the repetitions of one driver on one case in one source, with a label that tells
// it apart from the report's other groups.
type group struct {
	results.Group
	label string
	// set is the source's label (Source.Label, or its Name); src the first source of the set.
	set string
	src int
	// variant is what tells the group apart from the groups of the same driver: the set and
	// the case values that differ, "BASE cluster"; empty when nothing does.
	variant string
	// cases is the part of variant that is case values ("cluster"), without the set.
	cases string
	// color indexes palette (one per driver in the whole report), dash the variant's
	// pattern (plotutil.Dashes).
	color, dash int
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
	// The runs of each set (label), in the order the sets first appear.
	var sets []string
	setRuns := make(map[string][]results.Run)
	setSrc := make(map[string]int)
	names := defaultLabels(sources)
	for i, s := range sources {
		if s.File == nil {
			return nil, fmt.Errorf("source %d (%s): no file", i, s.Name)
		}
		set := names[i]
		if _, ok := setSrc[set]; !ok {
			sets = append(sets, set)
			setSrc[set] = i
			setRuns[set] = nil
		}
		steps := make(map[int]bool)
		if sw := s.File.Sweep; sw != nil {
			// Named by its set, short, as the other charts name it.
			r.sweeps = append(r.sweeps, newSweepView(i, Source{Name: set, Label: s.Label, File: s.File}, sw))
			steps = stepRuns(sw)
		}
		for j, run := range s.File.Runs {
			if !steps[j] {
				setRuns[set] = append(setRuns[set], run)
			}
		}
	}
	for _, set := range sets {
		for _, g := range results.GroupRuns(setRuns[set]) {
			r.groups = append(r.groups, &group{Group: g, set: set, src: setSrc[set]})
		}
	}
	if len(r.sweeps) == 1 {
		r.sweeps[0].name = "" // the page's only sweep needs no name
	}
	// Sets count when they have runs drawn: a sweep's file beside a run's adds none.
	drawnSets := make(map[string]bool)
	for _, g := range r.groups {
		drawnSets[g.set] = true
	}
	r.labelGroups(len(drawnSets) > 1)
	r.style()
	r.width = vg.Length(opts.Width) * vg.Inch / DPI

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
	// The grouped bars first: with several sets or cases they are the overview.
	barsT, barsCPU, err := r.barsCharts()
	if err := errors.Join(err, add(barsT, nil), add(barsCPU, nil)); err != nil {
		return nil, err
	}
	parts := r.caseParts()
	for _, part := range parts {
		c, err := spectrumChart("spectrum", "Acquire latency by percentile", part.groups)
		if err := add(part.named(c), err); err != nil {
			return nil, err
		}
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
	for _, part := range parts {
		c, err := roundsChart(part.groups)
		if err := add(part.named(c), err); err != nil {
			return nil, err
		}
	}
	var tlNotes []string
	for _, part := range parts {
		tput, p99, notes := timelineCharts(part.groups)
		if err := errors.Join(add(part.named(tput), nil), add(part.named(p99), nil)); err != nil {
			return nil, err
		}
		tlNotes = notes
	}
	if len(parts) > 1 {
		// Said once for the report, the groups by their whole names ("lockcore v1.2 single").
		_, _, tlNotes = timelineCharts(r.groups)
	}
	r.notes()
	r.Notes = append(r.Notes, tlNotes...)
	return r, nil
}

// casePart is the groups one line chart draws: all of them, or those of one case.
type casePart struct {
	// cases is the case's values ("cluster"); "" when the part is the whole report.
	cases  string
	groups []*group
}

// setsAndCases returns the report's distinct sets (labels) and cases (topologies), in the
// order their first groups come.
func (r *Report) setsAndCases() (sets, cases []string) {
	for _, g := range r.groups {
		if !slices.Contains(sets, g.set) {
			sets = append(sets, g.set)
		}
		if !slices.Contains(cases, g.cases) {
			cases = append(cases, g.cases)
		}
	}
	return sets, cases
}

// caseParts splits the line charts (spectrum, rounds, timelines) by case when the report has
// several sets (labels) and several cases (topologies): 2 labels × 6 drivers × 2 topologies
// are 24 lines, a tangle no legend untangles, and the lines a reader compares, one driver's
// v1.2 and v1.3 on one topology, belong in one chart. Each part's groups are copies named by
// their driver and set alone ("lockcore v1.3"), their set's dash pattern; the chart is named
// by the case. Otherwise the one part is every group as it is.
func (r *Report) caseParts() []casePart {
	sets, cases := r.setsAndCases()
	if len(sets) < 2 || len(cases) < 2 {
		return []casePart{{groups: r.groups}}
	}
	parts := make([]casePart, len(cases))
	for i, c := range cases {
		parts[i].cases = c
		for _, g := range r.groups {
			if g.cases != c {
				continue
			}
			cp := *g
			cp.variant = g.set
			cp.label = g.Driver() + " " + g.set
			if g.Incomplete > 0 {
				cp.label += " (incomplete)"
			}
			cp.dash = slices.Index(sets, g.set)
			parts[i].groups = append(parts[i].groups, &cp)
		}
	}
	return parts
}

// named gives c, a chart of the part's groups, the part's case in its ID and title
// ("spectrum-cluster", "Acquire latency by percentile: cluster"); c may be nil.
func (p casePart) named(c *Chart) *Chart {
	if c == nil || p.cases == "" {
		return c
	}
	c.ID += "-" + fileSafe(p.cases)
	c.Title += ": " + p.cases
	c.plot.Title.Text = c.Title
	return c
}

// sweepID names a sweep's chart, with the source's index when the report has several sweeps.
func (r *Report) sweepID(sv *sweepView, base string) string {
	if len(r.sweeps) > 1 {
		return base + "-" + strconv.Itoa(sv.src+1)
	}
	return base
}

// defaultLabels returns each source's set: its label, else its file's (results.File.Label),
// else a short name of its own made from its Name (ShortLabels), else its place ("#2").
// Sources of one label are one set.
func defaultLabels(sources []Source) []string {
	label := func(s Source) string {
		if s.Label == "" && s.File != nil {
			return s.File.Label
		}
		return s.Label
	}
	var named []string
	for _, s := range sources {
		if label(s) == "" && s.Name != "" {
			named = append(named, s.Name)
		}
	}
	short := ShortLabels(named)
	out := make([]string, len(sources))
	k := 0
	for i, s := range sources {
		switch {
		case label(s) != "":
			out[i] = label(s)
		case s.Name != "":
			out[i] = short[k]
			k++
		default:
			out[i] = "#" + strconv.Itoa(i+1)
		}
	}
	// Unlabelled sources are sets of their own, also when their names are alike (files of one
	// second in two directories): those get their place as well.
	count := make(map[string]int)
	for _, l := range out {
		count[l]++
	}
	for i, s := range sources {
		if label(s) == "" && count[out[i]] > 1 {
			out[i] += " #" + strconv.Itoa(i+1)
		}
	}
	return out
}

// labelGroups labels every group with its driver, then with what tells it apart from the
// groups of other sets and cases: the set's label when there are several sets ("BASE"), then
// the case values that differ between groups ("cluster", "conc=64"). "(incomplete)" marks
// groups with runs that did not finish. Only what differs is named, so that a legend of
// twelve lines stays short enough to sit beside the chart.
func (r *Report) labelGroups(sets bool) {
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
		for _, l := range g.Case() {
			if name := strings.ReplaceAll(l.Name, "_", " "); differ[l.Name] && !slices.Contains(r.differ, name) {
				r.differ = append(r.differ, name)
			}
		}
	}
	for _, g := range r.groups {
		var cases []string
		for _, l := range g.Case() {
			if differ[l.Name] {
				cases = append(cases, caseText(l))
			}
		}
		g.cases = strings.Join(cases, " ")
		g.variant = g.cases
		if sets {
			g.variant = strings.TrimSpace(g.set + " " + g.cases)
		}
		g.label = strings.TrimSpace(g.Driver() + " " + g.variant)
		if g.Incomplete > 0 {
			g.label += " (incomplete)"
		}
	}
}

// caseText is a case value as a legend shows it: the value alone where it says what it is
// ("cluster", "contention", "zipf"), else name=value shortened ("conc=64").
func caseText(l results.Label) string {
	switch l.Name {
	case "workload", "topology", "key_dist":
		return l.Value
	}
	return shortLabel(l.Name) + "=" + l.Value
}

// style gives every driver of the report one color, the same in every chart (the i-th
// driver seen, in groups then sweeps, the i-th of the palette), and every variant of a driver
// (set, topology, …) one dash pattern, the first variant solid: six drivers on two topologies
// are six colors in two line styles, never one color for two drivers.
func (r *Report) style() {
	r.colors = make(map[string]int)
	color := func(driver string) int {
		if _, ok := r.colors[driver]; !ok {
			r.colors[driver] = len(r.colors)
		}
		return r.colors[driver]
	}
	for _, g := range r.groups {
		g.color = color(g.Driver())
		found := false
		for i, v := range r.variants {
			if v == g.variant {
				g.dash, found = i, true
			}
		}
		if !found {
			g.dash = len(r.variants)
			r.variants = append(r.variants, g.variant)
		}
	}
	for _, sv := range r.sweeps {
		for _, d := range sv.drivers {
			d.color = color(d.Driver)
		}
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
			r.Notes = append(r.Notes, fmt.Sprintf("%s is incomplete (interrupted or failed part way): it shows what was measured; its configuration below says which runs did not finish and why.", name))
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
