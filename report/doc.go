// Package report draws lockbench result files as charts: a self-contained HTML page (inline
// CSS, charts as inline SVG, nothing fetched from anywhere, so it opens offline and can be
// mailed or attached to a design doc) and a PNG file of each chart, drawn from the same
// gonum.org/v1/plot plot as its SVG.
//
// From any result files (results.File, schema 1) it draws:
//
//   - bars-throughput and bars-redis-cpu: when the runs span more than one label or
//     topology, grouped bars of each driver's median throughput (and Redis CPU per
//     acquisition, when measured), one bar per label and topology, a topology's labels side
//     by side;
//   - spectrum: the acquire latency percentile spectrum, HdrHistogram style: the percentile
//     on a log axis of 1/(1-q), labelled 50%, 90%, 99%, 99.9%…, the latency on a log axis,
//     one line per driver and case (per file when there are several), from the run
//     histograms merged losslessly over the rounds;
//   - rounds: for repeated runs (--repeat), each round's throughput per driver, so the noise
//     between rounds shows;
//   - timeline-throughput and timeline-p99: for runs with a timeline of three intervals or
//     more, throughput and acquire p99 second by second (a note names the runs too short);
//
// With several labels and several topologies (or other case values) the spectrum, rounds and
// timeline charts are drawn once per topology ("spectrum-cluster"), each with one line per
// driver and label, so that the lines compared share a chart and a legend stays short;
//   - sweep: for sweep files (results.Sweep), achieved throughput against acquire p99
//     (solid) and p50 (dashed) per driver, each step marked by its verdict, the SLO as a
//     horizontal line and each driver's knee ringed; plus a spectrum per driver with one
//     line per step;
//
// and tables: the runs' medians, each file's configuration, topology, host and versions,
// skipped drivers and incomplete runs.
//
// # Labels, colors and legends
//
// Each Source may carry a Label (BASE, NEW, v1.2): the sources of one label are one set, whose
// runs pool. ParseSpec and ReadSpecs read "NAME=PATH" arguments; unlabelled files are named by
// ShortLabels. A series is named by its driver and only what differs between the series (the
// label, then differing case values). Every driver keeps one color in every chart of a page;
// its labels and topologies are dash patterns. Legends are laid out beside the plot area.
// BuildCompare and WriteCompare draw a BASE/NEW page from a compare.Report and its files.
//
// # Sweeps
//
// A sweep file (lockbench sweep) is an ordinary result file whose "sweep" key,
// results.Sweep, says which runs are its steps: per driver, each step's load (a target rate
// or a number of workers), the run it produced (by index in "runs"), the throughput it
// achieved, its SLO percentile, its verdict, and the driver's knee. The report draws what
// the file says and judges nothing itself, so the chart and lockbench sweep's summary cannot
// disagree: the x axis is the step's achieved throughput as the sweep measured it (in an open
// loop, the arrivals kept over the schedule's window), the knee is the driver's knee_step,
// and the SLO line is the sweep's limit. When the SLO's percentile is neither 50 nor 99 it is
// drawn too (dotted), from the step's latency_us. The runs of the steps are drawn in the
// sweep's charts rather than in the spectrum, rounds and timeline charts; other runs of a
// sweep file are drawn like any others.
//
// Build makes a Report from results.Files; Report.WriteHTML writes the page and
// Report.WriteFiles the page and the PNGs into a directory. Nothing here is safe for
// concurrent modification; distinct Reports may be used concurrently.
package report
