package extdriver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/keyspace"
)

// ErrHello is wrapped by DeclaredKeys's errors when an adapter it started for its hello failed
// (did not start, or said no valid hello). Check it with errors.Is.
var ErrHello = errors.New("extdriver: the keys an adapter declares could not be read from its hello")

// DeclaredKeys starts the adapter of each exec driver among specs for cfg's deployment, reads
// its hello and ends it, and returns the keys the hellos declare (Hello.Keys), each pattern
// once, in the order found. A run on a deployment lockbench attached to needs them before it
// looks at the keyspace (a preflight, then every cleaning), and an adapter says hello only once
// it runs: this is that short start. Built-in drivers and the null adapter declare none and are
// not started. The adapter runs here, in this process's environment: a run whose generators run
// elsewhere (lockbench run --generators docker) still reads the hellos on this machine. The error
// names the adapter that did not say a valid hello and wraps ErrHello.
func DeclaredKeys(ctx context.Context, specs []string, cfg drivers.Config) ([]keyspace.Declared, error) {
	var out []keyspace.Declared
	for _, spec := range specs {
		if !strings.HasPrefix(spec, SchemePrefix+":") || IsNull(spec) {
			continue
		}
		d, err := New(spec)
		if err != nil {
			return nil, err
		}
		opt := Options{Name: d.s.Name, Argv: d.s.Argv, Env: Env(cfg)}
		if cfg.Conn != nil {
			opt.Redact = cfg.Conn.Redact
		}
		a, err := Start(ctx, opt)
		if err != nil {
			return nil, fmt.Errorf("%w: starting adapter %s: %w", ErrHello, d.s.Name, err)
		}
		h := a.Hello()
		if err := a.Close(); err != nil {
			return nil, fmt.Errorf("%w: adapter %s: %w", ErrHello, d.s.Name, err)
		}
		for _, k := range h.Declared() {
			if !slices.ContainsFunc(out, func(o keyspace.Declared) bool { return o.Pattern == k.Pattern }) {
				out = append(out, k)
			}
		}
	}
	return out, nil
}
