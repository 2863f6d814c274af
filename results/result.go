package results

import (
	"fmt"
	"maps"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// selfCommand is the command lockbench itself sends to read commandstats; it
// is not part of the measured workload.
const selfCommand = "info"

// Percentiles summarises one latency distribution in microseconds. It is a
// plain value and safe for concurrent use.
type Percentiles struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// Histograms holds a run's latency histograms, each the base64 text of the
// HdrHistogram V2 compressed encoding, so later tools can merge and compare
// runs without loss. It is a plain value and safe for concurrent use.
type Histograms struct {
	Acquire string `json:"acquire"`
	Release string `json:"release"`
	Cycle   string `json:"cycle"`
	// Service is an open loop's acquire latency from the actual start; empty otherwise.
	Service string `json:"service,omitempty"`
	// StartLag is an open loop's start lag of the attempts taken on time; empty otherwise.
	StartLag string `json:"start_lag,omitempty"`
}

// Run is one benchmark run in a result file: what was run, and what was
// measured. Field names and JSON tags are a public contract (see
// SchemaVersion). It is a plain value; it is not safe for concurrent
// modification.
type Run struct {
	Driver string `json:"driver"`
	// Round is the 1-based repetition of this driver when lockbench ran every driver several
	// times, interleaved (--repeat); 0 when the run was not repeated or predates repetitions.
	Round          int               `json:"round,omitempty"`
	DriverSettings map[string]string `json:"driver_settings,omitempty"`
	// The fields tagged `lockbench:"case"` say what was run (see Run.Case); a new
	// configuration field that makes runs incomparable needs the tag too.
	Workload string `json:"workload" lockbench:"case"`
	Topology string `json:"topology"`
	// TopologySpec is the topology as the user named it, e.g. "masters:5", where Topology is
	// its kind ("masters"); empty in files from before topologies had parameters.
	TopologySpec string   `json:"topology_spec,omitempty"`
	Addrs        []string `json:"addrs,omitempty"`
	Concurrency  int      `json:"concurrency" lockbench:"case"`
	Keys         int      `json:"keys" lockbench:"case"`
	KeyDist      string   `json:"key_dist" lockbench:"case"`
	HoldUS       float64  `json:"hold_us" lockbench:"case"`
	Seed         int64    `json:"seed"`
	WarmupS      float64  `json:"warmup_s"`
	// Pacing is PacingClosed or PacingOpen; empty in files from before open loops (closed).
	// It is no case label of its own: TargetRate tells the pacings apart, and leaving it out
	// keeps closed-loop cases those of older files.
	Pacing string `json:"pacing,omitempty"`
	// Arrival and TargetRate are an open loop's arrival process (uniform, poisson) and target
	// acquisitions/s summed over all workers; empty and 0 in a closed loop, whose case then
	// leaves them out ("omitzero").
	Arrival    string  `json:"arrival,omitempty" lockbench:"case,omitzero"`
	TargetRate float64 `json:"target_rate,omitempty" lockbench:"case,omitzero"`
	// Net is the network conditions lockbench put between its clients and Redis (--net, see
	// package netem), e.g. "latency=1ms"; empty when they talked directly, whose case then
	// leaves it out.
	Net string `json:"net,omitempty" lockbench:"case,omitzero"`

	// DurationS is the measured, not the planned, duration of the recorded
	// phase in seconds; an interrupted run is shorter than planned.
	DurationS        float64     `json:"duration_s"`
	Acquisitions     int64       `json:"acquisitions"`
	ThroughputPerS   float64     `json:"throughput_per_s"`
	AcquireLatencyUS Percentiles `json:"acquire_latency_us"`
	ReleaseLatencyUS Percentiles `json:"release_latency_us"`
	CycleLatencyUS   Percentiles `json:"cycle_latency_us"`
	// An open loop's measurements (see SetOpenLoop); zero in a closed loop. AcquireLatencyUS
	// is then from each attempt's intended start, ServiceLatencyUS from its actual start.
	AchievedRate     float64      `json:"achieved_rate,omitempty"`
	Late             int64        `json:"late,omitempty"`
	Dropped          int64        `json:"dropped,omitempty"`
	Saturated        bool         `json:"saturated,omitempty"`
	ServiceLatencyUS *Percentiles `json:"service_latency_us,omitempty"`
	// StartLagUS is an open loop's start lag: how long after its intended start an attempt
	// that a free worker took on time actually started, i.e. how late the generator woke up
	// (see Recorder.ScheduleLag). Attempts late because every worker was busy are counted in
	// Late instead. Nil in a closed loop and in files from before it.
	StartLagUS *Percentiles `json:"start_lag_us,omitempty"`
	// Violations counts the safety violations of every kind the workload's checker observed:
	// two holders of one lock at once, and fencing tokens out of grant order. Unlike the
	// measured figures it includes the warm-up, because a breach is a breach whenever it
	// happens.
	Violations int64 `json:"violations"`
	// Checkers names the safety checkers that watched the run (CheckerInProcess,
	// CheckerSharedMemory, CheckerReferee); for a run of several processes, those every process
	// ran. Empty in files from before it was recorded.
	Checkers []string `json:"checkers,omitempty"`
	// Referee is what the safety referee saw (lockbench run --referee); nil without one.
	Referee *Referee `json:"referee,omitempty"`
	// Resource is what the protected resource saw (lockbench run --resource): corrupt writes,
	// stale writes rejected, leases lost at release; nil without one.
	Resource *Resource `json:"resource,omitempty"`
	// FencingViolations is the part of Violations that were fencing tokens not above an earlier
	// grant's for the same key, seen inside the critical section (fenced lock drivers only);
	// warm-up included like Violations. They are not errors: Errors leaves them out.
	FencingViolations int64 `json:"fencing_violations,omitempty"`
	// MaxConcurrentReaders is the most read holds seen inside one key at once (read-write
	// workloads only; warm-up included): above 1 shows that readers share.
	MaxConcurrentReaders int64            `json:"max_concurrent_readers,omitempty"`
	Errors               int64            `json:"errors"`
	ErrorsByKind         map[string]int64 `json:"errors_by_kind,omitempty"`
	// ErrorSamples keeps, per error kind, the first MaxErrorSamples distinct messages (redacted
	// of the connection's password), so a count says what failed; nil when none was kept.
	ErrorSamples map[string][]string `json:"error_samples,omitempty"`

	// RedisCommands is the number of commands the servers executed during the
	// measured phase, from INFO commandstats, leaving out lockbench's own
	// INFO. Redis also counts the commands a Lua script runs (an HINCRBY inside
	// EVALSHA counts as both), so this is the work the server did, not the
	// number of round trips.
	RedisCommands               int64            `json:"redis_commands"`
	RedisCommandsPerAcquisition float64          `json:"redis_commands_per_acquisition"`
	RedisCommandsByName         map[string]int64 `json:"redis_commands_by_name,omitempty"`
	// Nodes breaks the measured phase down per server (see SetServerStats); empty when only
	// one server's commands were measured the old way (SetCommands).
	Nodes []NodeResult `json:"nodes,omitempty"`

	// ClientCPUUS is lockbench's own CPU time (user + sys, all threads) over the measured
	// phase, in microseconds, with an external driver's adapter process's added: the
	// client-side cost of the lock library. 0: not measured.
	ClientCPUUS               float64 `json:"client_cpu_us,omitempty"`
	ClientCPUPerAcquisitionUS float64 `json:"client_cpu_per_acquisition_us,omitempty"`
	// AdapterCPUUS is the part of ClientCPUUS an external driver's adapter process spent (the
	// rest is lockbench's process), so that a reader sees the library's side of the pipe apart
	// from lockbench's. 0 for built-in drivers.
	AdapterCPUUS               float64 `json:"adapter_cpu_us,omitempty"`
	AdapterCPUPerAcquisitionUS float64 `json:"adapter_cpu_per_acquisition_us,omitempty"`
	// ServerCPUUS is the Redis servers' CPU time (used_cpu_user + used_cpu_sys, summed over
	// every measured node, replicas included) over the measured phase, in microseconds.
	ServerCPUUS               float64 `json:"server_cpu_us,omitempty"`
	ServerCPUPerAcquisitionUS float64 `json:"server_cpu_per_acquisition_us,omitempty"`
	// Capacity is the projected server-bound capacity from the masters' CPU (see Capacity);
	// nil when the servers' CPU was not measured.
	Capacity *Capacity `json:"capacity,omitempty"`

	// Fairness is how evenly the measured phase's grants went to the workers, and to the
	// processes of a run made by several (see Fairness); nil in files from before it.
	Fairness *Fairness `json:"fairness,omitempty"`
	// Holds is what the reentrancy and longhold workloads checked about their holds in Redis
	// (see HoldChecks); nil for other workloads.
	Holds *HoldChecks `json:"holds,omitempty"`

	// Audit is the post-run scan for keys the run left behind (see Audit); nil in files from
	// before it, and for runs written by callers that do not audit.
	Audit *Audit `json:"audit,omitempty"`

	// DriverCounts is the driver's own account of its work over the measured phase, for drivers
	// that keep one (nil otherwise): why cmds/acq and the latencies are what they are.
	DriverCounts *DriverCounts `json:"driver_counts,omitempty"`

	// Waiting is how the driver's waiters waited on pub/sub over the measured phase, for drivers
	// that count it (nil otherwise, and for drivers that wait by polling).
	Waiting *WaitCounts `json:"waiting,omitempty"`

	Complete   bool   `json:"complete"`
	Incomplete string `json:"incomplete_reason,omitempty"`
	// Aborted is the threshold that stopped the measured phase early (lockbench run
	// --abort-on-fail, a sweep step past its SLO) and what it read; the run is then
	// incomplete. Empty otherwise.
	Aborted    string     `json:"aborted,omitempty"`
	StartedAt  time.Time  `json:"started_at"`
	Histograms Histograms `json:"histograms"`
	// Timeline is the measured phase second by second (acquisitions, errors, acquire p99 and
	// each second's histogram); nil in files from before timelines, and for runs that never
	// reached the measured phase.
	Timeline *Timeline `json:"timeline,omitempty"`
	// Fleet is the generator processes of a run made by several (lockbench run --procs,
	// lockbench worker, lockbench merge).
	Fleet *Fleet `json:"fleet,omitempty"`
	// ServerErrors is what the servers refused during the measured phase (error replies by
	// prefix, rejected connections, the user's ACL LOG); nil when they refused nothing or were
	// not measured.
	ServerErrors *ServerErrors `json:"server_errors,omitempty"`
	// ServerStall is the measured phase's longest wait for a master's answer to lockbench's
	// PING, when it reached --stall-threshold; nil otherwise.
	ServerStall *ServerStall `json:"server_stall,omitempty"`
	// Failed gives, one sentence each, why lockbench run failed the run beyond its counted errors
	// and violations: no acquisition at all, refusals by the servers, a stall. Empty otherwise.
	Failed []string `json:"failed,omitempty"`
	// Faults is the run's fault schedule (lockbench run --fault) and what became of each
	// fault; nil for runs without faults.
	Faults []Fault `json:"faults,omitempty"`
}

// Fill sets the measured fields of r from s and the elapsed time of the
// measured phase: duration, acquisitions, throughput (0 if elapsed is not
// positive), latency percentiles, errors and encoded histograms. A nil s
// counts as empty. It returns an error only if encoding a histogram fails. It
// is not safe for concurrent use on the same Run.
func (r *Run) Fill(s *Stats, elapsed time.Duration) error {
	if s == nil {
		s = Merge()
	}
	r.DurationS = elapsed.Seconds()
	r.Acquisitions = s.Acquisitions
	r.ThroughputPerS = 0
	if elapsed > 0 {
		r.ThroughputPerS = float64(s.Acquisitions) / elapsed.Seconds()
	}
	r.AcquireLatencyUS = percentiles(s.Acquire)
	r.ReleaseLatencyUS = percentiles(s.Release)
	r.CycleLatencyUS = percentiles(s.Cycle)
	r.Errors = s.ErrorCount()
	r.ErrorsByKind = nil
	if len(s.Errors) > 0 {
		r.ErrorsByKind = maps.Clone(s.Errors)
	}
	r.ErrorSamples = cloneSamples(s.ErrorSamples)
	// Keep the per-acquisition ratios right whichever of Fill and the Set
	// methods runs first.
	r.setRatios()

	var err error
	if r.Histograms.Acquire, err = encode(s.Acquire); err != nil {
		return fmt.Errorf("encode acquire histogram: %w", err)
	}
	if r.Histograms.Release, err = encode(s.Release); err != nil {
		return fmt.Errorf("encode release histogram: %w", err)
	}
	if r.Histograms.Cycle, err = encode(s.Cycle); err != nil {
		return fmt.Errorf("encode cycle histogram: %w", err)
	}
	r.ServiceLatencyUS, r.Histograms.Service = nil, ""
	if s.Service != nil {
		p := percentiles(s.Service)
		r.ServiceLatencyUS = &p
		if r.Histograms.Service, err = encode(s.Service); err != nil {
			return fmt.Errorf("encode service-time histogram: %w", err)
		}
	}
	r.StartLagUS, r.Histograms.StartLag = nil, ""
	if s.StartLag != nil {
		p := percentiles(s.StartLag)
		r.StartLagUS = &p
		if r.Histograms.StartLag, err = encode(s.StartLag); err != nil {
			return fmt.Errorf("encode start-lag histogram: %w", err)
		}
	}
	return nil
}

// SetCommands sets RedisCommands, RedisCommandsByName and
// RedisCommandsPerAcquisition (0 when there are no acquisitions) from the
// commandstats delta of the measured phase, leaving out lockbench's own
// "info". It may be called before or after Fill. It is not safe for concurrent
// use on the same Run.
func (r *Run) SetCommands(delta CommandStats) {
	r.RedisCommands = delta.Total(selfCommand)
	r.RedisCommandsByName = nil
	for name, st := range delta {
		if name == selfCommand || st.Calls == 0 {
			continue
		}
		if r.RedisCommandsByName == nil {
			r.RedisCommandsByName = make(map[string]int64)
		}
		r.RedisCommandsByName[name] = st.Calls
	}
	r.setRatios()
}

// NodeResult is one server's share of a run's measured phase. It is a plain
// value and safe for concurrent use.
type NodeResult struct {
	Addr string `json:"addr"`
	Role string `json:"role"`
	// Commands is what the node executed, leaving out lockbench's own INFO;
	// a replica counts the writes it replayed.
	Commands int64 `json:"commands"`
	// CPUUS is the node's used_cpu_user + used_cpu_sys delta in microseconds.
	CPUUS float64 `json:"cpu_us"`
}

// SetServerStats records the per-node delta of the measured phase: Nodes,
// ServerCPUUS (every node), and, through SetCommands, the commands of the
// masters only, because a replica replays its master's writes and counting
// them again would inflate cmds/acq. A node whose role is empty counts as a
// master. It may be called before or after Fill. It is not safe for
// concurrent use on the same Run.
func (r *Run) SetServerStats(delta ServerStats) {
	masters := CommandStats{}
	r.Nodes = nil
	var cpu time.Duration
	for _, n := range delta {
		if n.Role == "" || n.Role == RoleMaster {
			masters = masters.Add(n.Commands)
		}
		cpu += n.CPU
		r.Nodes = append(r.Nodes, NodeResult{Addr: n.Addr, Role: n.Role, Commands: n.Commands.Total(selfCommand), CPUUS: micros64(n.CPU)})
	}
	r.ServerCPUUS = micros64(cpu)
	r.ServerErrors = delta.serverErrors()
	r.SetCommands(masters)
}

// DriverCounts are a driver's counts of its lock work over the measured phase (see
// drivers.Counters), with their ratios to the run's acquisitions. It is a plain value.
type DriverCounts struct {
	// Attempts is lock attempts sent to Redis; FailedAttempts those that found the lock taken.
	Attempts       int64 `json:"attempts"`
	FailedAttempts int64 `json:"failed_attempts"`
	// LocalHandoffs is grants passed between workers inside the process, with no Redis call.
	LocalHandoffs int64 `json:"local_handoffs"`

	FailedAttemptsPerAcquisition float64 `json:"failed_attempts_per_acquisition"`
	LocalHandoffsPerAcquisition  float64 `json:"local_handoffs_per_acquisition"`
}

// SetDriverCounts records the driver's counts over the measured phase. It may be called before
// or after Fill. It is not safe for concurrent use on the same Run.
func (r *Run) SetDriverCounts(attempts, failed, handoffs int64) {
	r.DriverCounts = &DriverCounts{Attempts: attempts, FailedAttempts: failed, LocalHandoffs: handoffs}
	r.setRatios()
}

// WaitCounts are a driver's pub/sub waiting over the measured phase (see drivers.WaitStats),
// with ratios to the run's acquisitions. It is a plain value.
type WaitCounts struct {
	// Subscribes and Unsubscribes are the (S)SUBSCRIBE and (S)UNSUBSCRIBE commands sent.
	Subscribes   int64 `json:"subscribes"`
	Unsubscribes int64 `json:"unsubscribes"`
	// PeakChannels is the most channels the client had subscribed at once.
	PeakChannels int64 `json:"peak_channels"`
	// ChannelsAfter is the channels still subscribed once the workers had stopped and their
	// unsubscribes had had up to WaitSettle to go through: leaked subscriptions.
	ChannelsAfter int64 `json:"channels_after"`
	// WokenByMessage is waits ended by a wake-up message; EndedWithoutWake those ended by their
	// timer (the lock's TTL, or a bounded wait) with no message: missed wake-ups.
	WokenByMessage   int64 `json:"woken_by_message"`
	EndedWithoutWake int64 `json:"ended_without_wake"`
	// SubscribeTimeouts is subscriptions that failed for want of time (Redisson's "Subscribe
	// timeout" and "Unable to acquire subscription lock").
	SubscribeTimeouts int64 `json:"subscribe_timeouts"`

	SubscribesPerAcquisition   float64 `json:"subscribes_per_acquisition"`
	UnsubscribesPerAcquisition float64 `json:"unsubscribes_per_acquisition"`
}

// WaitSettle is how long a run waits after its workers stop for their unsubscribes to go
// through before it counts the channels still subscribed.
const WaitSettle = 2 * time.Second

// SetWaiting records the driver's pub/sub waiting over the measured phase. It may be called
// before or after Fill. It is not safe for concurrent use on the same Run.
func (r *Run) SetWaiting(w WaitCounts) {
	r.Waiting = &w
	r.setRatios()
}

// SetClientCPU records lockbench's own CPU time over the measured phase (an external driver's
// adapter's added). It
// may be called before or after Fill. It is not safe for concurrent use on
// the same Run.
func (r *Run) SetClientCPU(cpu time.Duration) {
	r.ClientCPUUS = micros64(cpu)
	r.setRatios()
}

// SetAdapterCPU records the part of the client CPU an external driver's adapter process spent
// over the measured phase.
func (r *Run) SetAdapterCPU(cpu time.Duration) {
	r.AdapterCPUUS = micros64(cpu)
	r.setRatios()
}

func (r *Run) setRatios() {
	r.RedisCommandsPerAcquisition = perAcquisition(r.RedisCommands, r.Acquisitions)
	r.ClientCPUPerAcquisitionUS = perAcquisitionF(r.ClientCPUUS, r.Acquisitions)
	r.AdapterCPUPerAcquisitionUS = perAcquisitionF(r.AdapterCPUUS, r.Acquisitions)
	r.ServerCPUPerAcquisitionUS = perAcquisitionF(r.ServerCPUUS, r.Acquisitions)
	r.Capacity = r.capacity()
	if d := r.DriverCounts; d != nil {
		d.FailedAttemptsPerAcquisition = perAcquisition(d.FailedAttempts, r.Acquisitions)
		d.LocalHandoffsPerAcquisition = perAcquisition(d.LocalHandoffs, r.Acquisitions)
	}
	if w := r.Waiting; w != nil {
		w.SubscribesPerAcquisition = perAcquisition(w.Subscribes, r.Acquisitions)
		w.UnsubscribesPerAcquisition = perAcquisition(w.Unsubscribes, r.Acquisitions)
	}
}

func micros64(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// Decode decodes the three histograms. An empty string decodes as an empty
// histogram, so a run that failed before measuring still reads back. Errors
// name the histogram that failed. It is safe for concurrent use.
func (h Histograms) Decode() (acquire, release, cycle *hdrhistogram.Histogram, err error) {
	if acquire, err = decode(h.Acquire); err != nil {
		return nil, nil, nil, fmt.Errorf("acquire: %w", err)
	}
	if release, err = decode(h.Release); err != nil {
		return nil, nil, nil, fmt.Errorf("release: %w", err)
	}
	if cycle, err = decode(h.Cycle); err != nil {
		return nil, nil, nil, fmt.Errorf("cycle: %w", err)
	}
	return acquire, release, cycle, nil
}

// PercentilesOf summarises h, a histogram of microseconds, as a result does. It is safe for
// concurrent use provided h is not being recorded into.
func PercentilesOf(h *hdrhistogram.Histogram) Percentiles { return percentiles(h) }

func percentiles(h *hdrhistogram.Histogram) Percentiles {
	return Percentiles{
		P50:  float64(h.ValueAtQuantile(50)),
		P90:  float64(h.ValueAtQuantile(90)),
		P99:  float64(h.ValueAtQuantile(99)),
		P999: float64(h.ValueAtQuantile(99.9)),
		Max:  float64(h.Max()),
		Mean: h.Mean(),
	}
}

func perAcquisition(commands, acquisitions int64) float64 {
	return perAcquisitionF(float64(commands), acquisitions)
}

func perAcquisitionF(total float64, acquisitions int64) float64 {
	if acquisitions <= 0 {
		return 0
	}
	return total / float64(acquisitions)
}

// encode returns the V2 compressed encoding, which the library already
// returns as base64 text.
func encode(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	return string(b), err
}

func decode(s string) (*hdrhistogram.Histogram, error) {
	if s == "" {
		return newHistogram(), nil
	}
	return hdrhistogram.Decode([]byte(s))
}
