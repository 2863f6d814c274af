package generators

import (
	"archive/tar"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/fleet"
	"github.com/lockbench/lockbench/results"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
)

// ErrNoImage is wrapped by Run's error when the image is not on the engine: nothing was
// started. Check it with errors.Is.
var ErrNoImage = errors.New("generator image not on the Docker engine")

// ErrAllLost is wrapped by Run's error when no generator left a result.
var ErrAllLost = errors.New("generators: no generator left a result")

// ImageEnv is the variable Run sets in every generator to the image's id, so that each worker
// records what it ran (results.ProcessResult.Image) and merge can refuse a mix.
const ImageEnv = "LOCKBENCH_IMAGE"

// ResultPath is where, inside its container, a generator writes its result file; Run copies it
// out of the stopped container (no volume is shared with the host).
const ResultPath = "/data/lockbench-result.json"

// DefaultStopGrace is how long an interrupted generator has, after SIGINT, to release its locks
// and write what it measured before it is killed.
const DefaultStopGrace = 15 * time.Second

// DefaultStartDelay and startDelayPerGen set how far ahead Run puts the common start time:
// creating and starting a container takes longer than starting a process.
const (
	DefaultStartDelay = 3 * time.Second
	startDelayPerGen  = 500 * time.Millisecond
)

// removeTimeout bounds the removal of a run's containers, which happens also after ctx ended.
const removeTimeout = time.Minute

// Options describes one run of generators. It is a plain value.
type Options struct {
	// Image is the lockbench image (LocalImage if empty).
	Image string
	// N is the number of generators, at least 1.
	N int
	// RunID names the containers (lockbench-gen-<RunID>-<index>) and labels them; empty: a new
	// random id.
	RunID string
	// Args returns generator index's 'lockbench worker' arguments (without the program name):
	// they must make it wait for startAt and write its result file to output.
	Args func(index int, startAt time.Time, output string) []string
	// Env is set in every generator (NAME=value).
	Env []string
	// Networks are the networks every generator joins, the first as its own (at least one).
	Networks []string
	// CPUs, if set, pins every generator to these CPUs (a cpuset: "0", "0-1", "0,2").
	CPUs string
	// Stderr receives the generators' output, each line prefixed with "[NAME] "; nil discards it.
	Stderr io.Writer
	// StopGrace is how long a generator has after SIGINT before SIGKILL (DefaultStopGrace if 0).
	StopGrace time.Duration
	// StartDelay is how far ahead the common start time is set (0: DefaultStartDelay and half a
	// second per generator).
	StartDelay time.Duration
	// Started, if set, is called with each generator's index and container name once it runs.
	Started func(index int, name string)
}

// Exit is how one generator ended. It is a plain value.
type Exit struct {
	Index int
	// Name is the container's name.
	Name string
	// Code is the worker's exit status; -1 when it did not start or was not waited for.
	Code int
	// Err is nil for exit status 0; else why it failed.
	Err error
}

func (e Exit) String() string {
	switch {
	case e.Err == nil:
		return fmt.Sprintf("generator %d (%s) exited 0", e.Index, e.Name)
	case e.Code < 0:
		return fmt.Sprintf("generator %d (%s) failed: %v", e.Index, e.Name, e.Err)
	}
	return fmt.Sprintf("generator %d (%s) exited %d", e.Index, e.Name, e.Code)
}

// Run starts the N generators as containers of the image, on the networks, with a common start
// time, waits for them, copies each one's result file out of its container and merges them
// losslessly (results.MergeProcesses). When ctx ends it sends each generator one SIGINT, as
// Ctrl-C would, and SIGKILL after StopGrace. Every container is removed before Run returns,
// whatever happened. A generator that left no result is named in the merged run's Incomplete
// and Fleet.Lost. Each generator checks its own holders only: Fleet.CrossProcessChecker is
// false. It returns every generator's Exit; the error wraps docker.ErrNoDocker (no engine),
// ErrNoImage, drivers.ErrUnsupported (every generator skipped the driver) or ErrAllLost. It is
// safe for concurrent use.
func Run(ctx context.Context, o Options) (results.Run, []Exit, error) {
	if o.N < 1 || o.Args == nil || len(o.Networks) == 0 {
		return results.Run{}, nil, fmt.Errorf("generators: want N ≥ 1 (have %d), Args and a network", o.N)
	}
	if o.Image == "" {
		o.Image = LocalImage
	}
	if o.RunID == "" {
		o.RunID = NewRunID()
	}
	if o.StopGrace <= 0 {
		o.StopGrace = DefaultStopGrace
	}
	cli, err := newClient(ctx)
	if err != nil {
		return results.Run{}, nil, err
	}
	defer cli.Close()
	img, err := cli.ImageInspect(ctx, o.Image)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return results.Run{}, nil, fmt.Errorf("%w: %s (build it from this checkout with 'lockbench image build lockbench')", ErrNoImage, o.Image)
		}
		return results.Run{}, nil, fmt.Errorf("generators: inspect %s: %w", o.Image, err)
	}

	delay := o.StartDelay
	if delay <= 0 {
		delay = DefaultStartDelay + time.Duration(o.N)*startDelayPerGen
	}
	startAt := time.Now().Add(delay).UTC()
	env := append([]string{ImageEnv + "=" + img.ID}, o.Env...)

	gens := make([]*generator, o.N)
	exits := make([]Exit, o.N)
	defer func() {
		// Also after Ctrl-C: the containers must not outlive the run.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
		defer cancel()
		for _, g := range gens {
			if g != nil && g.id != "" {
				cli.ContainerRemove(rctx, g.id, client.ContainerRemoveOptions{Force: true})
			}
		}
	}()
	var stderrMu sync.Mutex
	for i := range o.N {
		name := fmt.Sprintf("lockbench-gen-%s-%d", o.RunID, i)
		exits[i] = Exit{Index: i, Name: name, Code: -1}
		g := &generator{index: i, name: name}
		gens[i] = g
		res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
			Name: name,
			Config: &container.Config{
				Image:  o.Image,
				Cmd:    o.Args(i, startAt, ResultPath),
				Env:    env,
				Labels: generatorLabels(o.RunID, i),
			},
			HostConfig: &container.HostConfig{
				NetworkMode: container.NetworkMode(o.Networks[0]),
				Resources:   container.Resources{CpusetCpus: o.CPUs},
			},
		})
		if err != nil {
			exits[i].Err = fmt.Errorf("create: %w", err)
			return results.Run{}, exits, fmt.Errorf("generators: %s", exits[i])
		}
		g.id = res.ID
		for _, n := range o.Networks[1:] {
			if _, err := cli.NetworkConnect(ctx, n, client.NetworkConnectOptions{Container: g.id, EndpointConfig: &network.EndpointSettings{}}); err != nil {
				exits[i].Err = fmt.Errorf("connect to network %s: %w", n, err)
				return results.Run{}, exits, fmt.Errorf("generators: %s", exits[i])
			}
		}
	}

	var wg sync.WaitGroup
	for i, g := range gens {
		// Waiting is registered before the start, so a generator that exits at once is seen.
		wait := cli.ContainerWait(context.WithoutCancel(ctx), g.id, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
		if _, err := cli.ContainerStart(ctx, g.id, client.ContainerStartOptions{}); err != nil {
			exits[i].Err = fmt.Errorf("start: %w", err)
			continue
		}
		if o.Started != nil {
			o.Started(i, g.name)
		}
		var logsDone chan struct{}
		if o.Stderr != nil {
			logsDone = make(chan struct{})
			go func() {
				defer close(logsDone)
				g.copyLogs(context.WithoutCancel(ctx), cli, fleet.NewPrefixWriter(o.Stderr, &stderrMu, "["+g.name+"] "))
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			exits[i].Code, exits[i].Err = g.wait(ctx, cli, wait, o.StopGrace)
			if logsDone != nil {
				<-logsDone // its last lines before the run's verdict
			}
		}()
	}
	wg.Wait()

	var parts []results.Run
	var skips, ended []string
	for i, g := range gens {
		if exits[i].Code < 0 {
			ended = append(ended, exits[i].String())
			continue
		}
		f, err := g.result(context.WithoutCancel(ctx), cli)
		if err != nil {
			ended = append(ended, fmt.Sprintf("%s; its result: %v", exits[i], err))
			continue
		}
		for _, sk := range f.Skipped {
			skips = append(skips, sk.Reason)
		}
		if len(f.Runs) == 1 {
			parts = append(parts, f.Runs[0])
		} else if len(f.Skipped) == 0 {
			ended = append(ended, fmt.Sprintf("%s with %d runs in its result", exits[i], len(f.Runs)))
		}
	}
	if len(parts) == 0 {
		if len(skips) > 0 {
			return results.Run{}, exits, fmt.Errorf("%w: %s", drivers.ErrUnsupported, skips[0])
		}
		return results.Run{}, exits, fmt.Errorf("%w: %s", ErrAllLost, strings.Join(ended, "; "))
	}
	run, err := results.MergeProcesses(parts)
	if err != nil {
		return results.Run{}, exits, err
	}
	if len(ended) > 0 && run.Incomplete != "" {
		run.Incomplete += " (" + strings.Join(ended, "; ") + ")"
	}
	run.Fleet.CrossProcessChecker = false
	return run, exits, nil
}

// NewRunID returns a short random id for a run's containers and network.
func NewRunID() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// LabelGenerator is the label holding a generator container's index.
const LabelGenerator = "lockbench.generator"

func generatorLabels(runID string, index int) map[string]string {
	l := labels(runID)
	l[LabelGenerator] = strconv.Itoa(index)
	return l
}

// generator is one started container.
type generator struct {
	index    int
	name, id string
}

// wait waits for the container to exit and returns its status. When ctx ends first it sends
// SIGINT, then SIGKILL after grace.
func (g *generator) wait(ctx context.Context, cli *dockerClient, w client.ContainerWaitResult, grace time.Duration) (int, error) {
	bg := context.WithoutCancel(ctx)
	var kill <-chan time.Time
	interrupted := false
	for {
		select {
		case r := <-w.Result:
			code := int(r.StatusCode)
			if r.Error != nil && r.Error.Message != "" {
				return -1, errors.New(r.Error.Message)
			}
			if code != 0 {
				return code, fmt.Errorf("exit status %d", code)
			}
			return 0, nil
		case err := <-w.Error:
			return -1, fmt.Errorf("waiting: %w", err)
		case <-ctx.Done():
			if !interrupted {
				interrupted = true
				cli.ContainerKill(bg, g.id, client.ContainerKillOptions{Signal: "SIGINT"})
				kill = time.After(grace)
			}
			ctx = context.Background() // seen once
		case <-kill:
			cli.ContainerKill(bg, g.id, client.ContainerKillOptions{Signal: "SIGKILL"})
			kill = nil
		}
	}
}

// copyLogs follows the container's output until it exits, line by line to w.
func (g *generator) copyLogs(ctx context.Context, cli *dockerClient, w *fleet.PrefixWriter) {
	rc, err := cli.ContainerLogs(ctx, g.id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Follow: true})
	if err != nil {
		w.Write([]byte("cannot follow its output: " + err.Error() + "\n"))
		return
	}
	defer rc.Close()
	stdcopy.StdCopy(w, w, rc)
	w.Flush()
}

// maxResultSize bounds a result file copied out of a container: large histograms are a few MB.
const maxResultSize = 1 << 30

// result copies the generator's result file out of its stopped container and decodes it.
func (g *generator) result(ctx context.Context, cli *dockerClient) (*results.File, error) {
	res, err := cli.CopyFromContainer(ctx, g.id, client.CopyFromContainerOptions{SourcePath: ResultPath})
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil, errors.New("it wrote none")
		}
		return nil, err
	}
	defer res.Content.Close()
	tr := tar.NewReader(res.Content)
	if _, err := tr.Next(); err != nil {
		return nil, fmt.Errorf("reading the copy: %w", err)
	}
	return results.Decode(io.LimitReader(tr, maxResultSize))
}
