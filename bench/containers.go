package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/lockbench/lockbench/collect"
	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/generators"
	"github.com/lockbench/lockbench/results"
)

// reach returns the networks the generator containers join, their own first, and the
// addresses they dial.
func (r *remote) reach(ctx context.Context) (networks, addrs []string, err error) {
	own := r.f.Docker.Network
	if t, ok := r.tgt.Topology().(*docker.Topology); ok {
		join, addrs, err := t.Reach(ctx, own.Name)
		if errors.Is(err, docker.ErrHostNetwork) {
			err = fmt.Errorf("--generators docker: %w", err)
		}
		return append([]string{own.ID}, join...), addrs, err
	}
	return []string{own.ID}, r.childAddrs(), nil
}

// runContainers runs rm's driver as Fleet.Procs generator containers (Fleet.Docker) and
// returns their merged run.
func (r *remote) runContainers(ctx context.Context, rm *Remote) (results.Run, error) {
	driver, rep, d := rm.Driver, r.rep, r.f.Docker
	cfg := r.spec.Config
	cfg.Fill()
	networks, addrs, err := r.reach(ctx)
	if err != nil {
		return results.Run{}, err
	}
	// Results come back through a Redis, not a volume: Collect's, or one of our own on the
	// generators' network, apart from the deployment under test.
	id := collect.NewRunID()
	store := collect.Options{Addr: r.f.Collect.Addr, CAFile: r.f.Collect.CAFile}
	child := Endpoint{CAFile: store.CAFile}
	var storeEnv []string
	if store.Addr != "" {
		if child.Addr, storeEnv, err = collect.ChildArgs(store); err != nil {
			return results.Run{}, fmt.Errorf("--collect: %w", err)
		}
	} else {
		srv, err := generators.StartStore(ctx, networks[0])
		if err != nil {
			return results.Run{}, fmt.Errorf("the Redis the generators hand their results to: %w", err)
		}
		defer srv.Close()
		store = collect.Options{Addr: srv.Addr()}
		child.Addr = srv.Addr()
	}
	env, refEP, err := r.env(storeEnv)
	if err != nil {
		return results.Run{}, err
	}
	clockMode, now, local := r.clock(ctx, driver)
	image := d.Image
	if image == "" {
		image = generators.LocalImage
	}
	rep.Line("%s: %d generator containers of %s × %d workers, dialling %s; results collected on %s, run %s",
		driver, r.f.Procs, image, cfg.Concurrency, strings.Join(addrs, ","), conn.RedactURL(store.Addr), id)
	containers := &generators.Containers{}
	cf := r.clientFaults(ctx, rm.Faults, containerClients{containers}, local)
	var onStart func(time.Time)
	if cf != nil {
		onStart = cf.onStart
		defer cf.wait() // also when Run fails before starting a container
	}
	run, exits, err := generators.Run(ctx, generators.Options{
		Now:        now,
		OnStart:    onStart,
		Containers: containers,
		Image:      image,
		N:          r.f.Procs,
		RunID:      id,
		Networks:   networks,
		CPUs:       d.CPUs,
		Env:        env, // passwords: never on a command line
		Stderr:     lineWriter{rep},
		Started:    func(i int, name string) { rep.Line("generator %d: container %s", i, name) },
		Args: func(i int, startAt time.Time, output string) []string {
			w := r.worker(driver, rm.Round, i, addrs, clockMode)
			w.StartAt, w.Output = startAt, output
			w.RunID, w.Collect, w.Referee = id, child, refEP
			if r.ref != nil {
				w.Resource = r.ref.resource
			}
			return w.Args()
		},
		Gather: func(ctx context.Context) (*results.File, error) { return r.gather(ctx, store, id) },
	})
	if cf != nil {
		cf.wait() // the containers are gone: nothing is left paused
	}
	for _, e := range exits {
		if e.Err != nil && !(ctx.Err() != nil && e.Code == exitInterrupted) {
			rep.Line("lockbench run: %v", e)
		}
	}
	if err != nil {
		return run, err
	}
	rm.Failed = r.after(ctx, driver, id, &run)
	for _, e := range exits {
		if e.Err != nil && ctx.Err() == nil {
			rm.Failed = true // a generator that failed fails the run, named above
		}
	}
	return run, nil
}

// OnLoopback reports whether addr (host:port, or a redis:// or rediss:// URL) is on this host's
// loopback, which a generator container, in a network namespace of its own, cannot reach.
func OnLoopback(addr string) bool {
	host := addr
	if strings.Contains(addr, "://") {
		u, err := url.Parse(addr)
		if err != nil {
			return false
		}
		host = u.Hostname()
	} else if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
