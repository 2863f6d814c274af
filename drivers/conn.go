package drivers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/conn"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// ConnectTimeout bounds how long Open waits for a deployment to answer before it gives up with
// an error, so that a wrong address fails a run at once instead of hanging it.
const ConnectTimeout = 5 * time.Second

// ReplyTimeout bounds how long a client waits on a server that took a command and does not
// answer (a paused or wedged server keeps its sockets open, so nothing else ends the wait): it is
// go-redis' ReadTimeout and WriteTimeout, and rueidis' ConnWriteTimeout, its write deadline and
// how long the PING it sends after a second of silence may take. The libraries' defaults held a
// run with a paused server for 10 to 20 s (go-redis 5 s, and 5 s again for the HELLO of the
// connection it retries on; rueidis 1 s + 10 s, then its reconnect), past the release grace a run
// gives; with this a command fails within about twice ReplyTimeout. Under load replies keep
// arriving, so only a stalled server goes this long without sending a byte.
const ReplyTimeout = 2 * time.Second

// Topology names as Config.Topology holds them: the compose.Kind* strings, repeated here so that
// drivers do not depend on the package that starts servers (a test checks they agree).
const (
	topoSingle   = "single"
	topoSentinel = "sentinel"
	topoCluster  = "cluster"
	topoMasters  = "masters"
)

// topology returns cfg.Topology checked against the known kinds ("" means single), and checks
// that the kind has what it needs.
func topology(cfg Config) (string, error) {
	t := cfg.Topology
	if t == "" {
		t = topoSingle
	}
	switch t {
	case topoSingle, topoSentinel, topoCluster, topoMasters:
	default:
		return "", fmt.Errorf("drivers: unknown topology %q (want %s, %s, %s or %s)", cfg.Topology, topoSingle, topoSentinel, topoCluster, topoMasters)
	}
	if len(cfg.Addrs) == 0 {
		return "", fmt.Errorf("drivers: topology %s needs at least one address", t)
	}
	if t == topoSentinel && cfg.MasterName == "" {
		return "", errors.New("drivers: topology sentinel needs the master name the sentinels monitor")
	}
	return t, nil
}

// singleNodeTopology returns the topology of cfg for a driver that locks on one deployment, and
// an error wrapping ErrUnsupported on N independent masters, which only RedLock-style drivers use.
func singleNodeTopology(cfg Config, driver string) (string, error) {
	t, err := topology(cfg)
	if err != nil {
		return "", err
	}
	if t == topoMasters {
		return "", fmt.Errorf("%w: %s has no multi-master (RedLock) mode", ErrUnsupported, driver)
	}
	return t, nil
}

// poolSize is the connection pool for a go-redis client shared by cfg.Concurrency workers: one
// connection each, so that no worker queues for a connection, and go-redis' default floor.
func poolSize(cfg Config) int { return max(cfg.Concurrency, 10) }

// openGoRedis returns a go-redis client for single, sentinel or cluster, checked with a PING
// bounded by ConnectTimeout. maxRetries is go-redis's MaxRetries (0: its default, -1: none).
// Masters must be handled by the caller (see openGoRedisEach).
func openGoRedis(ctx context.Context, cfg Config, t string, maxRetries int) (redis.UniversalClient, error) {
	return openGoRedisPool(ctx, cfg, t, maxRetries, poolSize(cfg))
}

// openGoRedisPool is openGoRedis with pool connections per node.
func openGoRedisPool(ctx context.Context, cfg Config, t string, maxRetries, pool int) (redis.UniversalClient, error) {
	return openGoRedisTimeout(ctx, cfg, t, maxRetries, pool, ReplyTimeout)
}

// openGoRedisTimeout is openGoRedisPool with replyTimeout in place of ReplyTimeout, for a driver
// that reproduces a library whose timeout differs (Redisson's 3 s).
func openGoRedisTimeout(ctx context.Context, cfg Config, t string, maxRetries, pool int, replyTimeout time.Duration) (redis.UniversalClient, error) {
	var rdb redis.UniversalClient
	switch t {
	case topoSingle:
		o := &redis.Options{
			Addr:         cfg.Addrs[0],
			PoolSize:     pool,
			DialTimeout:  ConnectTimeout,
			ReadTimeout:  replyTimeout,
			WriteTimeout: replyTimeout,
			MaxRetries:   maxRetries,
		}
		cfg.Conn.GoRedis(o, via(cfg))
		rdb = redis.NewClient(o)
	case topoSentinel:
		o := &redis.FailoverOptions{
			MasterName:    cfg.MasterName,
			SentinelAddrs: cfg.Addrs,
			PoolSize:      pool,
			DialTimeout:   ConnectTimeout,
			ReadTimeout:   replyTimeout,
			WriteTimeout:  replyTimeout,
			MaxRetries:    maxRetries,
		}
		cfg.Conn.GoRedisFailover(o, via(cfg)) // the sentinels' connections too
		rdb = redis.NewFailoverClient(o)
	case topoCluster:
		// PoolSize is per node in a cluster client; each worker talks to one node at a time.
		o := &redis.ClusterOptions{
			Addrs:        cfg.Addrs,
			PoolSize:     pool,
			DialTimeout:  ConnectTimeout,
			ReadTimeout:  replyTimeout,
			WriteTimeout: replyTimeout,
			MaxRetries:   maxRetries,
		}
		cfg.Conn.GoRedisCluster(o, via(cfg))
		rdb = redis.NewClusterClient(o)
	default:
		return nil, fmt.Errorf("drivers: go-redis client for topology %q: use one client per master", t)
	}
	if err := ping(ctx, rdb); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("connect to %s %v: %w", t, cfg.Addrs, err)
	}
	return rdb, nil
}

// openGoRedisEach returns one standalone go-redis client per address, for the independent
// masters of a RedLock deployment. On error every client opened so far is closed.
func openGoRedisEach(ctx context.Context, cfg Config) ([]redis.UniversalClient, error) {
	pool := poolSize(cfg)
	out := make([]redis.UniversalClient, 0, len(cfg.Addrs))
	for _, addr := range cfg.Addrs {
		o := &redis.Options{
			Addr:         addr,
			PoolSize:     pool,
			DialTimeout:  ConnectTimeout,
			ReadTimeout:  ReplyTimeout,
			WriteTimeout: ReplyTimeout,
		}
		cfg.Conn.GoRedis(o, via(cfg))
		rdb := redis.NewClient(o)
		out = append(out, rdb)
		if err := ping(ctx, rdb); err != nil {
			for _, c := range out {
				c.Close()
			}
			return nil, fmt.Errorf("connect to master %s: %w", addr, err)
		}
	}
	return out, nil
}

// via returns cfg.Dialer for the conn.Settings builders, which bound each dial by the client's
// dial timeout (ConnectTimeout) and do TLS over it; nil dials directly.
func via(cfg Config) conn.DialFunc {
	if cfg.Dialer == nil {
		return nil
	}
	return cfg.Dialer
}

// goRedisReplyTimeout and rueidisReplyTimeout describe ReplyTimeout for Settings, naming the
// client options it sets.
func goRedisReplyTimeout() string {
	return ReplyTimeout.String() + " (go-redis ReadTimeout and WriteTimeout)"
}

func rueidisReplyTimeout() string { return ReplyTimeout.String() + " (rueidis ConnWriteTimeout)" }

// ping checks that rdb answers within ConnectTimeout (or ctx, if it ends first).
func ping(ctx context.Context, rdb redis.UniversalClient) error {
	ctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	return rdb.Ping(ctx).Err()
}

// rueidisOption returns the rueidis client options for single, sentinel or cluster. rueidis finds
// out by itself that a cluster address is one; sentinel needs the master set. Dials give
// up after ConnectTimeout, so rueidis.NewClient fails fast on a dead address.
func rueidisOption(cfg Config, t string) (rueidis.ClientOption, error) {
	opt := rueidis.ClientOption{
		InitAddress:      append([]string(nil), cfg.Addrs...),
		Dialer:           net.Dialer{Timeout: ConnectTimeout},
		BlockingPoolSize: poolSize(cfg),
		ConnWriteTimeout: ReplyTimeout,
	}
	switch t {
	case topoSingle:
		// Without this rueidis first probes the address as a cluster node, and the probe's
		// connection, kept for the single client, later starts a delayed cluster refresh that
		// outlives Close.
		opt.ForceSingleClient = true
	case topoCluster:
	case topoSentinel:
		opt.Sentinel = rueidis.SentinelOption{MasterSet: cfg.MasterName, Dialer: net.Dialer{Timeout: ConnectTimeout}}
	default:
		return rueidis.ClientOption{}, fmt.Errorf("drivers: rueidis client for topology %q: use one client per master", t)
	}
	cfg.Conn.Rueidis(&opt, via(cfg)) // the sentinels' connections too
	return opt, nil
}

// serverVersion returns the redis_version INFO reports, e.g. "7.0.15", from any node rdb picks.
func serverVersion(ctx context.Context, rdb redis.UniversalClient) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return "", err
	}
	return infoField(info, "redis_version"), nil
}

// infoField returns the value of field in an INFO reply, or "".
func infoField(info, field string) string {
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

// versionAtLeast reports whether the dotted version v is at least want (e.g. "7.0.5"); an
// unparsable v counts as older.
func versionAtLeast(v string, want ...int) bool {
	parts := strings.Split(v, ".")
	for i, w := range want {
		if i >= len(parts) {
			return false
		}
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return false
		}
		if n != w {
			return n > w
		}
	}
	return true
}

// moduleVersion returns the version of the module at path linked into this binary, for Settings;
// "unknown" when the build carries no module information.
func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}

// detach returns ctx without its cancellation, allocating only when ctx can be canceled. Drivers
// send a lock or unlock command with it so that, once sent, the command runs to its reply even if
// ctx ends: a caller that gave up must still learn whether it got the lock, or the lock would be
// left held with nobody to release it. The clients' read timeouts bound the wait.
func detach(ctx context.Context) context.Context {
	if ctx.Done() == nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// sleepCtx sleeps for d or until ctx ends, reusing *t across calls; it returns ctx's error if ctx
// ended.
func sleepCtx(ctx context.Context, t **time.Timer, d time.Duration) error {
	if *t == nil {
		*t = time.NewTimer(d)
	} else {
		(*t).Reset(d)
	}
	select {
	case <-ctx.Done():
		(*t).Stop()
		return ctx.Err()
	case <-(*t).C:
		return nil
	}
}
