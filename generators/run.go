package generators

import (
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

// ResultPath is where, inside its container, a generator writes its result file; it goes with
// the container. Options.Gather fetches what the generators handed back.
const ResultPath = "/data/lockbench-result.json"

// gatherTimeout bounds Options.Gather, also after an interrupt.
const gatherTimeout = time.Minute

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
	// Now, if set, reads the clock the common start time is set by, the one Args tells the
	// generators to wait by (the deployment's: clock.Estimate.Now); nil: time.Now.
	Now func() time.Time
	// Started, if set, is called with each generator's index and container name once it runs.
	Started func(index int, name string)
	// OnStart, if set, is called with the common start time, by Now's clock, before the
	// containers are created: lockbench run schedules its client faults from it.
	OnStart func(startAt time.Time)
	// Containers, if set, is filled with the generators while they run, so that a client fault
	// can pause and unpause them (see Containers).
	Containers *Containers
	// Gather fetches the generators' results, merged, once all have ended (collect.Fetch: they
	// hand them back through a Redis, not a shared volume). It gets a context that outlives an
	// interrupt by gatherTimeout, so that what was measured is fetched even then. When some
	// processes are missing it returns the file merged from the others, whose run lists them
	// in Fleet.Lost, and an error; a nil file means none could be fetched.
	Gather func(ctx context.Context) (*results.File, error)
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
// time, waits for them, and fetches their merged result with Gather. When ctx ends it sends each generator one SIGINT, as
// Ctrl-C would, and SIGKILL after StopGrace. Every container is removed before Run returns,
// whatever happened. A generator that left no result is named in the merged run's Incomplete
// and Fleet.Lost. Each generator checks its own holders only: Fleet.CrossProcessChecker is
// false. It returns every generator's Exit; the error wraps docker.ErrNoDocker (no engine),
// ErrNoImage, drivers.ErrUnsupported (every generator skipped the driver) or ErrAllLost. It is
// safe for concurrent use.
func Run(ctx context.Context, o Options) (results.Run, []Exit, error) {
	if o.N < 1 || o.Args == nil || o.Gather == nil || len(o.Networks) == 0 {
		return results.Run{}, nil, fmt.Errorf("generators: want N ≥ 1 (have %d), Args, Gather and a network", o.N)
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
	now := o.Now
	if now == nil {
		now = time.Now
	}
	startAt := now().Add(delay).UTC()
	if o.OnStart != nil {
		o.OnStart(startAt)
	}
	env := append([]string{ImageEnv + "=" + img.ID}, o.Env...)

	gens := make([]*generator, o.N)
	exits := make([]Exit, o.N)
	defer func() {
		// Also after Ctrl-C: the containers must not outlive the run.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
		defer cancel()
		if o.Containers != nil {
			o.Containers.unpauseAll(rctx) // a paused container is not killed by its removal
		}
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
			if o.Containers != nil {
				o.Containers.remove(i) // a fault waiting for it to start stops waiting
			}
			continue
		}
		if o.Containers != nil {
			o.Containers.add(cli, g)
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
			unpause := func(context.Context) {}
			if o.Containers != nil {
				unpause = func(ctx context.Context) { _ = o.Containers.Unpause(ctx, i) }
			}
			exits[i].Code, exits[i].Err = g.wait(ctx, cli, wait, o.StopGrace, unpause)
			if o.Containers != nil {
				o.Containers.remove(i)
			}
			if logsDone != nil {
				<-logsDone // its last lines before the run's verdict
			}
		}()
	}
	wg.Wait()

	return gathered(ctx, o.Gather, exits)
}

// gathered fetches the merged result with gather and names the generators that left none.
func gathered(ctx context.Context, gather func(context.Context) (*results.File, error), exits []Exit) (results.Run, []Exit, error) {
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gatherTimeout)
	defer cancel()
	f, err := gather(gctx)
	if f == nil || len(f.Runs) == 0 {
		if f != nil && len(f.Skipped) > 0 {
			return results.Run{}, exits, fmt.Errorf("%w: %s", drivers.ErrUnsupported, f.Skipped[0].Reason)
		}
		var ended []string
		for _, e := range exits {
			ended = append(ended, e.String())
		}
		if err != nil {
			ended = append(ended, err.Error())
		}
		return results.Run{}, exits, fmt.Errorf("%w: %s", ErrAllLost, strings.Join(ended, "; "))
	}
	run := f.Runs[0]
	if run.Fleet != nil && len(run.Fleet.Lost) > 0 {
		var ended []string
		for _, i := range run.Fleet.Lost {
			if i >= 0 && i < len(exits) {
				ended = append(ended, exits[i].String())
			}
		}
		if run.Incomplete != "" && len(ended) > 0 {
			run.Incomplete += " (" + strings.Join(ended, "; ") + ")"
		}
	}
	if run.Fleet != nil {
		run.Fleet.CrossProcessChecker = false
	}
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

// wait waits for the container to exit and returns its status. When ctx ends first it unpauses
// it (a paused container takes no signal) and sends SIGINT, then SIGKILL after grace.
func (g *generator) wait(ctx context.Context, cli *dockerClient, w client.ContainerWaitResult, grace time.Duration, unpause func(context.Context)) (int, error) {
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
				unpause(bg)
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
