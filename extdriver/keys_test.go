package extdriver_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/extdriver"
	"github.com/lockbench/lockbench/extdriver/adapter"
	"github.com/redis/rueidis"
)

// tokens is the redsync adapter with a key of its own: every grant counts itself in
// "NAME:tokens" (as a library with a token counter would), declared in its hello when declare.
type tokens struct {
	*adapter.Driver
	c       rueidis.Client
	declare bool
}

func newTokens(declare bool) (*tokens, error) {
	cfg, err := adapter.ConfigFromEnv(nil)
	if err != nil {
		return nil, err
	}
	d, err := adapter.OpenDriver(context.Background(), drivers.RedsyncDriver{}, cfg)
	if err != nil {
		return nil, err
	}
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: cfg.Addrs, ForceSingleClient: true, DisableCache: true})
	if err != nil {
		return nil, err
	}
	return &tokens{Driver: d, c: c, declare: declare}, nil
}

func (t *tokens) Hello() extdriver.Hello {
	h := t.Driver.Hello()
	if t.declare {
		h.Keys = []string{"{name}:tokens"}
	}
	return h
}

func (t *tokens) Acquire(ctx context.Context, owner, name string) error {
	if err := t.Driver.Acquire(ctx, owner, name); err != nil {
		return err
	}
	return t.c.Do(ctx, t.c.B().Incr().Key(name+":tokens").Build()).Error()
}

// The keys rule: an adapter that makes a key its hello does not declare fails, the rule and
// the key named; the same adapter declaring it passes; keys on the Redis before the check are
// not the adapter's.
func TestCheckKeys(t *testing.T) {
	for _, tc := range []struct {
		kind string
		fail bool
	}{{"tokens", true}, {"tokens-declared", false}} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			data := redistest.NewServer(t)
			c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: data.Addrs(), ForceSingleClient: true, DisableCache: true})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 4*bound)
			defer cancel()
			if err := c.Do(ctx, c.B().Set().Key("someone:else").Value("1").Build()).Error(); err != nil {
				t.Fatal(err)
			}
			cfg := drivers.Config{Topology: compose.KindSingle, Addrs: data.Addrs()}
			fails, out := checkSelfWith(t, tc.kind, cfg, func(o *extdriver.CheckOptions) { o.Redis = c })
			t.Log(out)
			var keys *extdriver.Failure
			for i, f := range fails {
				if f.Rule == extdriver.RuleKeys {
					keys = &fails[i]
				} else {
					t.Errorf("rule %s failed:\n%s", f.Rule, out)
				}
			}
			switch {
			case tc.fail && (keys == nil || !strings.Contains(keys.Detail, ":tokens\"") || !strings.Contains(out, "FAIL rule keys: ")):
				t.Errorf("an undeclared key: %+v; want the keys rule failed naming NAME:tokens\n%s", keys, out)
			case tc.fail && strings.Contains(keys.Detail, "someone:else"):
				t.Errorf("a key there before the check is blamed on the adapter: %s", keys.Detail)
			case !tc.fail && (keys != nil || !strings.Contains(out, "ok   keys\n")):
				t.Errorf("a declared key: %+v; want the keys rule kept\n%s", keys, out)
			}
		})
	}
}

// checkSelfWith is checkSelf (no fault, no marker) with options of its own.
func checkSelfWith(t *testing.T, kind string, cfg drivers.Config, with func(*extdriver.CheckOptions)) ([]extdriver.Failure, string) {
	t.Helper()
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 4*bound)
	defer cancel()
	opt := extdriver.CheckOptions{
		Spec: "exec:" + kind + "=" + os.Args[0], Config: cfg, Duration: 300 * time.Millisecond, Out: &out,
		Process: func(o *extdriver.Options) { o.Env = append(o.Env, envSelf+"="+kind, envFault+"=") },
	}
	with(&opt)
	fails, err := extdriver.Check(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	return fails, out.String()
}

// DeclaredKeys starts each exec adapter but the null one for its hello, and returns the keys
// declared, each once; an adapter that does not start is named.
func TestDeclaredKeys(t *testing.T) {
	t.Setenv(envSelf, "tokens-declared") // the adapter processes inherit the environment
	t.Setenv(envFault, "")
	data := redistest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cfg := drivers.Config{Topology: compose.KindSingle, Addrs: data.Addrs()}
	self := "exec:a=" + os.Args[0]
	ds, err := extdriver.DeclaredKeys(ctx, []string{"lockcore", "exec:null", self, "exec:b=" + os.Args[0]}, cfg)
	if err != nil || len(ds) != 1 || ds[0].Pattern != "{name}:tokens" {
		t.Errorf("DeclaredKeys = %+v, %v; want {name}:tokens once", ds, err)
	}
	if ds, err := extdriver.DeclaredKeys(ctx, []string{"lockcore", "exec:null"}, cfg); err != nil || ds != nil {
		t.Errorf("no exec adapter: %+v, %v; want none started, none declared", ds, err)
	}
	if _, err := extdriver.DeclaredKeys(ctx, []string{"exec:gone=/nonexistent/adapter"}, cfg); !errors.Is(err, extdriver.ErrHello) || !strings.Contains(err.Error(), "adapter gone") {
		t.Errorf("an adapter that does not start: %v; want it named", err)
	}
}
