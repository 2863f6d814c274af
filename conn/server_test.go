//go:build unix

package conn_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/conn/conntest"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

const (
	testUser     = "bench"
	testPassword = "pw-7f3a9c-never-printed"
)

// aclArgs makes redis-server refuse the default user and know testUser with testPassword.
func aclArgs() []string {
	return []string{"--user", "default", "off", "--user", testUser, "on", ">" + testPassword, "~*", "&*", "+@all"}
}

// tlsServer starts a TLS-only server with an ACL user, its certificate from a new CA.
func tlsServer(t *testing.T) (*compose.Single, *conntest.CA) {
	ca := conntest.NewCA(t, "lockbench test CA")
	cert, key := ca.Issue(t, conntest.Cert{})
	s := redistest.NewTLSServer(t, compose.NativeTLS{CertFile: cert, KeyFile: key, CAFile: ca.CertFile}, aclArgs()...)
	return s, ca
}

func settings(t *testing.T, opt conn.Options) *conn.Settings {
	t.Helper()
	opt.Getenv = func(string) string { return "" }
	s, err := conn.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// viaDirect is a DialFunc standing in for netem's: a plain TCP dial, so the TLS is lockbench's.
func viaDirect(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// pingBoth connects with rueidis and go-redis as s says (through via, if set) and PINGs.
func pingBoth(t *testing.T, s *conn.Settings, via conn.DialFunc) (rueidisErr, goRedisErr error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	ro := rueidis.ClientOption{InitAddress: s.Addrs(), ForceSingleClient: true, DisableCache: true, Dialer: net.Dialer{Timeout: 3 * time.Second}}
	s.Rueidis(&ro, via)
	if c, err := rueidis.NewClient(ro); err != nil {
		rueidisErr = err
	} else {
		rueidisErr = c.Do(ctx, c.B().Ping().Build()).Error()
		c.Close()
	}
	gro := redis.Options{Addr: s.Addrs()[0], DialTimeout: 3 * time.Second, MaxRetries: -1, DialerRetries: 1}
	s.GoRedis(&gro, via)
	rdb := redis.NewClient(&gro)
	goRedisErr = rdb.Ping(ctx).Err()
	rdb.Close()
	return rueidisErr, goRedisErr
}

func TestTLSWithACLUser(t *testing.T) {
	srv, ca := tlsServer(t)
	pw := conntest.PasswordFile(t, testPassword)
	s := settings(t, conn.Options{Addrs: []string{"rediss://" + testUser + "@" + srv.Addr()}, CAFile: ca.CertFile, PasswordFile: pw})
	for name, via := range map[string]conn.DialFunc{"direct": nil, "through a dialer": viaDirect} {
		if r, g := pingBoth(t, s, via); r != nil || g != nil {
			t.Errorf("%s: rueidis %v, go-redis %v", name, r, g)
		}
	}
	// Mutual TLS: the server demands a client certificate.
	cert, key := ca.Issue(t, conntest.Cert{Name: "client"})
	srvCert, srvKey := ca.Issue(t, conntest.Cert{})
	mtls := redistest.NewTLSServer(t, compose.NativeTLS{CertFile: srvCert, KeyFile: srvKey, CAFile: ca.CertFile, AuthClients: "yes"}, aclArgs()...)
	s = settings(t, conn.Options{Addrs: []string{"rediss://" + mtls.Addr()}, User: testUser, PasswordFile: pw, CAFile: ca.CertFile, CertFile: cert, KeyFile: key})
	if r, g := pingBoth(t, s, nil); r != nil || g != nil {
		t.Errorf("mutual TLS: rueidis %v, go-redis %v", r, g)
	}
	s = settings(t, conn.Options{Addrs: []string{"rediss://" + mtls.Addr()}, User: testUser, PasswordFile: pw, CAFile: ca.CertFile})
	r, _ := pingBoth(t, s, nil)
	if err := s.Classify(mtls.Addr(), r); !errors.Is(err, conn.ErrTLS) || !strings.Contains(err.Error(), "client certificate") {
		t.Errorf("mutual TLS without a client certificate: %v, want ErrTLS about the client certificate", err)
	}
}

// TestClassifyRefusals checks that each way of getting the settings wrong fails fast, wraps
// ErrAuth or ErrTLS, says what to do, and never shows the password.
func TestClassifyRefusals(t *testing.T) {
	srv, ca := tlsServer(t)
	plain := redistest.NewServer(t, aclArgs()...)
	other := conntest.NewCA(t, "another CA")
	expCert, expKey := ca.Issue(t, conntest.Cert{Name: "expired", NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-time.Hour)})
	expired := redistest.NewTLSServer(t, compose.NativeTLS{CertFile: expCert, KeyFile: expKey, CAFile: ca.CertFile}, aclArgs()...)
	pw := conntest.PasswordFile(t, testPassword)
	wrong := conntest.PasswordFile(t, "wrong-"+testPassword)
	tests := []struct {
		name string
		addr string
		opt  conn.Options
		want error
		says string
	}{
		{"wrong password", srv.Addr(), conn.Options{TLS: true, CAFile: ca.CertFile, User: testUser, PasswordFile: wrong}, conn.ErrAuth, "WRONGPASS"},
		{"unknown user", srv.Addr(), conn.Options{TLS: true, CAFile: ca.CertFile, User: "nobody", PasswordFile: pw}, conn.ErrAuth, "does not exist"},
		{"no password", plain.Addr(), conn.Options{}, conn.ErrAuth, "requires a password"},
		{"plaintext to a TLS port", srv.Addr(), conn.Options{User: testUser, PasswordFile: pw}, conn.ErrTLS, "use rediss://"},
		{"TLS to a plaintext port", plain.Addr(), conn.Options{TLS: true, CAFile: ca.CertFile, User: testUser, PasswordFile: pw}, conn.ErrTLS, "plaintext port"},
		{"CA that did not sign", srv.Addr(), conn.Options{TLS: true, CAFile: other.CertFile, User: testUser, PasswordFile: pw}, conn.ErrTLS, "not signed by a CA"},
		{"expired server certificate", expired.Addr(), conn.Options{TLS: true, CAFile: ca.CertFile, User: testUser, PasswordFile: pw}, conn.ErrTLS, "expired"},
		{"wrong server name", srv.Addr(), conn.Options{TLS: true, CAFile: ca.CertFile, ServerName: "redis.example", User: testUser, PasswordFile: pw}, conn.ErrTLS, "--tls-server-name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opt.Addrs = []string{tt.addr}
			s := settings(t, tt.opt)
			start := time.Now()
			r, g := pingBoth(t, s, nil)
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("took %v to fail", took) // a hang, not a timing measurement
			}
			for lib, err := range map[string]error{"rueidis": r, "go-redis": g} {
				if err == nil {
					t.Errorf("%s: connected", lib)
					continue
				}
				got := s.Classify(tt.addr, err)
				if !errors.Is(got, tt.want) || !strings.Contains(got.Error(), tt.says) {
					t.Errorf("%s: %v\n(from %v), want %v saying %q", lib, got, err, tt.want, tt.says)
				}
				if strings.Contains(got.Error(), testPassword) {
					t.Errorf("%s: error shows the password: %v", lib, got)
				}
			}
		})
	}
}
