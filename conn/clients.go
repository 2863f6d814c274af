package conn

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// DialFunc dials one connection, with the signature of go-redis' Options.Dialer. lockbench
// passes netem's, to put network conditions between the clients and Redis.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Rueidis fills o's credentials, database and TLS for a client of the data nodes; when
// o.Sentinel.MasterSet is set, the sentinels' credentials and TLS too. via, if not nil, dials
// every connection (TLS is then done over it). Other fields of o are left as they are.
func (s *Settings) Rueidis(o *rueidis.ClientOption, via DialFunc) {
	if s == nil {
		if via != nil {
			o.DialCtxFn = s.rueidisDial(via)
		}
		return
	}
	o.Username, o.Password = s.user, s.password
	o.SelectDB = s.db
	o.TLSConfig = s.tls.Clone()
	if o.Sentinel.MasterSet != "" {
		o.Sentinel.Username, o.Sentinel.Password = s.sUser, s.sPass
		o.Sentinel.TLSConfig = s.tls.Clone()
	}
	if via != nil || s.unix {
		o.DialCtxFn = s.rueidisDial(via)
	}
}

// RueidisSentinel fills o for a connection to one sentinel itself (not through it to the
// master): the sentinels' credentials and TLS.
func (s *Settings) RueidisSentinel(o *rueidis.ClientOption, via DialFunc) {
	if s == nil {
		if via != nil {
			o.DialCtxFn = s.rueidisDial(via)
		}
		return
	}
	o.Username, o.Password = s.sUser, s.sPass
	o.TLSConfig = s.tls.Clone()
	if via != nil {
		o.DialCtxFn = s.rueidisDial(via)
	}
}

// rueidisDial is a rueidis DialCtxFn that dials with via (or directly, over a Unix socket or
// TCP) and then does the TLS handshake itself when rueidis passes a TLS config.
func (s *Settings) rueidisDial(via DialFunc) func(context.Context, string, *net.Dialer, *tls.Config) (net.Conn, error) {
	return func(ctx context.Context, addr string, d *net.Dialer, cfg *tls.Config) (net.Conn, error) {
		timeout := d.Timeout
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel() // ends the dial's deadline, not the connection
		}
		var c net.Conn
		var err error
		switch {
		case via != nil:
			c, err = via(ctx, "tcp", addr)
		case s.Unix():
			c, err = d.DialContext(ctx, "unix", addr)
		default:
			c, err = d.DialContext(ctx, "tcp", addr)
		}
		if err != nil || cfg == nil {
			return c, err
		}
		return handshake(ctx, c, withServerName(cfg, addr))
	}
}

// GoRedis fills o's credentials, database, TLS and, for a Unix socket, its network, for a
// client of one data node. via, if not nil, dials every connection (TLS is then done over it).
func (s *Settings) GoRedis(o *redis.Options, via DialFunc) {
	if s != nil {
		o.Username, o.Password, o.DB = s.user, s.password, s.db
		o.TLSConfig = s.tls.Clone()
		if s.unix {
			o.Network = "unix"
		}
	}
	o.Dialer = s.goRedisDial(via, o.DialTimeout)
}

// GoRedisFailover fills o for a sentinel-backed client: the master's credentials, database
// and TLS, and the sentinels' own credentials (go-redis uses one TLS config for both).
func (s *Settings) GoRedisFailover(o *redis.FailoverOptions, via DialFunc) {
	if s != nil {
		o.Username, o.Password, o.DB = s.user, s.password, s.db
		o.SentinelUsername, o.SentinelPassword = s.sUser, s.sPass
		o.TLSConfig = s.tls.Clone()
	}
	o.Dialer = s.goRedisDial(via, o.DialTimeout)
}

// GoRedisCluster fills o's credentials and TLS for a cluster client.
func (s *Settings) GoRedisCluster(o *redis.ClusterOptions, via DialFunc) {
	if s != nil {
		o.Username, o.Password = s.user, s.password
		o.TLSConfig = s.tls.Clone()
	}
	o.Dialer = s.goRedisDial(via, o.DialTimeout)
}

// goRedisDial returns via bounded by timeout and followed by the TLS handshake, for go-redis'
// Dialer option, whose own TLS is skipped when a Dialer is set; nil (go-redis dials, with its
// TLS config) without via.
func (s *Settings) goRedisDial(via DialFunc, timeout time.Duration) func(context.Context, string, string) (net.Conn, error) {
	if via == nil {
		return nil
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel() // ends the dial's deadline, not the connection
		}
		c, err := via(ctx, network, addr)
		if err != nil || !s.TLS() {
			return c, err
		}
		return handshake(ctx, c, withServerName(s.tls, addr))
	}
}

// withServerName returns cfg with ServerName set from addr when it has none.
func withServerName(cfg *tls.Config, addr string) *tls.Config {
	if cfg.ServerName != "" {
		return cfg
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	cfg = cfg.Clone()
	cfg.ServerName = host
	return cfg
}

// handshake runs the TLS client handshake on c, bounded by ctx; on failure c is closed.
func handshake(ctx context.Context, c net.Conn, cfg *tls.Config) (net.Conn, error) {
	tc := tls.Client(c, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return tc, nil
}
