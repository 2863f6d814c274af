// Package results records lock benchmark measurements and reports them.
//
// Each worker records into its own Recorder (one HDR histogram per measured
// operation, so the hot path takes no shared lock); Merge combines them after
// the run, and a TimelineRecorder samples them every second meanwhile for the
// run's Timeline. Run.Fill turns the merged Stats into one row of the
// versioned JSON result file, which CI users read and which keeps the encoded
// histograms so runs can be merged or compared later without loss.
// WriteSummary and WriteBenchfmt render runs for people and for benchstat;
// ExportHDR writes HdrHistogram's .hgrm percentile files and .hlog interval
// logs. When a driver ran several times, GroupRuns and Ratios give the
// medians and the ratios to a baseline driver; Run.Case says which runs are
// comparable, and Metrics names the figures that gates and comparisons look
// at. ParseCommandStats and ParseCPU read Redis INFO, per node (ServerStats),
// to count the commands and server CPU each acquisition costs. File.Sweep
// records a lockbench sweep (see package sweep): its steps, verdicts and knees.
// A run made by
// several generator processes keeps each process's share in Run.Fleet;
// MergeProcesses and MergeFiles merge the shares losslessly, and Fairness
// (Jain's index, WriteFairness) says how evenly workers and processes were
// served. A run with faults (lockbench run --fault) records each in Run.Faults, with the
// time to first grant after it that a GrantWatch, told of every grant by the recorders, finds;
// WriteFaults prints them with the timeline around them.
package results
