package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// SchemaVersion is the version of the result file format. It changes only
// when a change would break existing readers; adding fields does not.
const SchemaVersion = 1

// ErrBadResult is wrapped by every error that ReadFile and Decode return for
// a file that is not a valid result file, as opposed to one that cannot be
// read at all. Check it with errors.Is.
var ErrBadResult = errors.New("bad result file")

// File is the content of one result file: the runs of one lockbench
// invocation and where they ran. It is a plain value; it is not safe for
// concurrent modification.
type File struct {
	Schema    int       `json:"schema"`
	Tool      string    `json:"tool"`
	Version   string    `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	// Label names the file's runs for people comparing files (lockbench run --label: "BASE",
	// "v1.3"): compare shows each side's, and a report draws the runs under it unless told
	// otherwise. "" when none was given, and in files from before labels; see CheckLabel.
	Label string `json:"label,omitempty"`
	// Command is the command line of the run (os.Args).
	Command      []string `json:"command,omitempty"`
	Host         Host     `json:"host"`
	RedisVersion string   `json:"redis_version,omitempty"`
	// Complete is false if the invocation was interrupted or failed part way;
	// the runs then hold whatever was measured.
	Complete bool `json:"complete"`
	// Topology is the deployment every run of the file ran against; nil in
	// files from before it was recorded.
	Topology *Topology `json:"topology,omitempty"`
	// Repeat is how many times each driver ran, interleaved; 0 means 1.
	Repeat int `json:"repeat,omitempty"`
	// Baseline is the driver the summary's ratios compare with.
	Baseline string `json:"baseline,omitempty"`
	Runs     []Run  `json:"runs"`
	// Skipped lists the combinations a driver cannot run, with the reason;
	// a skip is not a failure.
	Skipped []Skip `json:"skipped,omitempty"`
	// Sweep is set by lockbench sweep: the load steps, the SLO and each driver's knee; its
	// steps point into Runs. Nil for other commands and in files from before sweeps.
	Sweep *Sweep `json:"sweep,omitempty"`
	// Deployment is what the preflight found the runs measured against (package preflight):
	// each data node's version, mode, eviction policy, persistence, limits and round trip,
	// and the warnings. Nil in files from before it was recorded.
	Deployment *Deployment `json:"deployment,omitempty"`
	// Placement is where servers and client ran (--pin, --server-cpus, --client-cpus); nil in
	// files from before it was recorded.
	Placement *Placement `json:"placement,omitempty"`
	// Cleanup is what lockbench deleted of its own keys on an attached deployment (see
	// Cleanup); nil on a deployment it started, and in files from before it was recorded.
	Cleanup *Cleanup `json:"cleanup,omitempty"`
}

// Deployment is the preflight of a result file's deployment. It is a plain value.
type Deployment struct {
	Nodes []DeploymentNode `json:"nodes"`
	// Warnings say where the deployment itself makes locks unsafe or a run unrepresentative.
	Warnings []string `json:"warnings,omitempty"`
}

// DeploymentNode is one data node as the preflight found it. It is a plain value.
type DeploymentNode struct {
	Addr string `json:"addr"`
	Role string `json:"role"`
	// Version is redis_version; Mode is redis_mode (standalone, cluster).
	Version string `json:"version"`
	Mode    string `json:"mode"`
	// Maxmemory is in bytes (0: no limit); MaxmemoryPolicy is the eviction policy.
	Maxmemory       int64  `json:"maxmemory"`
	MaxmemoryPolicy string `json:"maxmemory_policy"`
	// AOF says appendonly is on; AOFFsync is appendfsync ("" when unknown); RDBSave is the
	// save schedule ("" when none, "unknown" when CONFIG GET is not allowed).
	AOF      bool   `json:"aof"`
	AOFFsync string `json:"aof_fsync,omitempty"`
	RDBSave  string `json:"rdb_save"`
	// Replicas is connected_slaves; MaxClients and ConnectedClients are INFO clients'.
	Replicas         int `json:"replicas"`
	MaxClients       int `json:"maxclients"`
	ConnectedClients int `json:"connected_clients"`
	// PingRTTMinUS and PingRTTMedianUS are the round trip of PINGs sent one at a time.
	PingRTTMinUS    float64 `json:"ping_rtt_min_us"`
	PingRTTMedianUS float64 `json:"ping_rtt_median_us"`
}

// Topology describes the Redis deployment of a result file. It is a plain
// value and safe for concurrent use.
type Topology struct {
	// Kind is single, sentinel, cluster or masters.
	Kind string `json:"kind"`
	// Spec is the topology as the user named it, e.g. "masters:5".
	Spec string `json:"spec"`
	// Provider says who started it: "native" or "docker" (lockbench did, and
	// removed it afterwards) or "attached" (a deployment lockbench was
	// pointed at with --addr).
	Provider   string         `json:"provider"`
	MasterName string         `json:"master_name,omitempty"`
	Nodes      []TopologyNode `json:"nodes"`
	// Connection describes how lockbench connected to an attached deployment: TLS, the
	// ACL user, whether a password was sent (never the password).
	Connection map[string]string `json:"connection,omitempty"`
}

// TopologyNode is one server of a Topology. It is a plain value and safe for
// concurrent use.
type TopologyNode struct {
	Addr string `json:"addr"`
	Role string `json:"role"`
}

// Skip is a driver that did not run because it cannot do what was asked on
// this topology or workload. It is a plain value and safe for concurrent use.
type Skip struct {
	Driver   string `json:"driver"`
	Workload string `json:"workload"`
	Topology string `json:"topology"`
	Reason   string `json:"reason"`
}

// Host describes the machine lockbench ran on. It is a plain value and safe
// for concurrent use.
type Host struct {
	GoVersion  string `json:"go_version"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	NumCPU     int    `json:"num_cpu"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Hostname   string `json:"hostname,omitempty"`
}

// NewFile returns a complete File with no runs, stamped with the schema, tool
// name, lockbench version, command line args, the current time and this
// host. It is safe for concurrent use.
func NewFile(version string, args []string) *File {
	hostname, _ := os.Hostname() // optional; an unknown host is left empty
	return &File{
		Schema:    SchemaVersion,
		Tool:      "lockbench",
		Version:   version,
		CreatedAt: time.Now().UTC(),
		Command:   append([]string(nil), args...),
		Host: Host{
			GoVersion:  runtime.Version(),
			GOOS:       runtime.GOOS,
			GOARCH:     runtime.GOARCH,
			NumCPU:     runtime.NumCPU(),
			GOMAXPROCS: runtime.GOMAXPROCS(0),
			Hostname:   hostname,
		},
		Complete: true,
		Runs:     []Run{},
	}
}

// WriteFile writes f as indented JSON into dir, creating dir if needed, and
// returns the path. The name is lockbench-<created, UTC>-<workload of the
// first run, or "run">.json, with -1, -2, … added rather than overwriting an
// existing file. The file appears complete or not at all. It is safe for
// concurrent use.
func WriteFile(dir string, f *File) (string, error) {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode result file: %w", err)
	}
	data = append(data, '\n')
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".lockbench-*.tmp")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // after Link the final name keeps the data
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644) // CreateTemp makes it private
	}
	if err != nil {
		return "", err
	}

	base := filepath.Join(dir, fileBase(f))
	for i := 0; ; i++ {
		path := base + ".json"
		if i > 0 {
			path = fmt.Sprintf("%s-%d.json", base, i)
		}
		// Link, unlike Rename, refuses to replace an existing file, so two
		// lockbench processes finishing in the same second cannot clobber
		// each other.
		err := os.Link(tmp.Name(), path)
		if err == nil {
			return path, nil
		}
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		// No hard links on this file system: check, then rename.
		if _, err := os.Lstat(path); err == nil {
			continue
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			return "", err
		}
		return path, nil
	}
}

// fileBase returns the file name without extension, keeping only characters
// that are safe in file names on every OS.
func fileBase(f *File) string {
	created := f.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	workload := "run"
	if len(f.Runs) > 0 && f.Runs[0].Workload != "" {
		workload = fileSafe(f.Runs[0].Workload)
	}
	if f.Sweep != nil {
		workload = "sweep-" + workload
	}
	return "lockbench-" + created.UTC().Format("20060102T150405Z") + "-" + workload
}

// ReadFile reads and validates the result file at path; see Decode. It is
// safe for concurrent use.
func ReadFile(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	f, err := Decode(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Decode reads a result file from r and validates it. Bad JSON, a missing or
// different schema, or a histogram that does not decode give an error that
// wraps ErrBadResult and names the field; an error reading r is returned as
// is. It is safe for concurrent use with distinct readers.
func Decode(r io.Reader) (*File, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	// Check the schema first: a file of another schema may not even fit
	// File, and "schema 2" says more than a type error would.
	var head struct {
		Schema *int `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, badResult("invalid JSON: %v", err)
	}
	switch {
	case head.Schema == nil:
		return nil, badResult("missing schema (not a lockbench result file?)")
	case *head.Schema != SchemaVersion:
		return nil, badResult("schema %d, this lockbench reads schema %d", *head.Schema, SchemaVersion)
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, badResult("%v", err)
	}
	if f.Label != "" {
		if err := CheckLabel(f.Label); err != nil {
			return nil, badResult("%v", err)
		}
	}
	for i := range f.Runs {
		if _, _, _, err := f.Runs[i].Histograms.Decode(); err != nil {
			return nil, badResult("runs[%d].histograms.%v", i, err)
		}
		if tl := f.Runs[i].Timeline; tl != nil {
			for j := range tl.Points {
				if _, err := decode(tl.Points[j].Histogram); err != nil {
					return nil, badResult("runs[%d].timeline.points[%d].histogram: %v", i, j, err)
				}
			}
		}
	}
	if f.Sweep != nil {
		if err := f.Sweep.check(len(f.Runs)); err != nil {
			return nil, badResult("sweep.%v", err)
		}
	}
	return &f, nil
}

func badResult(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadResult, fmt.Sprintf(format, args...))
}
