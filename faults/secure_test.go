//go:build unix

package faults

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/conn/conntest"
)

// Fail-over commands on a deployment that requires an ACL user and speaks TLS only (as a
// managed service does) connect as the run's clients do: without the settings the command is
// refused, with them it fires and the replica takes over; the error names no password.
func TestFailoverOnSecureDeployment(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sentinel deployment and a cluster")
	}
	const user, password = "bench", "pw-faults-0123456789"
	ca := conntest.NewCA(t, "faults test CA")
	cert, key := ca.Issue(t, conntest.Cert{})
	opt := compose.NativeOptions{
		TLS:  &compose.NativeTLS{CertFile: cert, KeyFile: key, CAFile: ca.CertFile},
		Auth: &compose.NativeAuth{User: user, Password: password},
	}
	pwFile := conntest.PasswordFile(t, password)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	for _, kind := range []string{compose.KindSentinel, compose.KindCluster} {
		t.Run(kind, func(t *testing.T) {
			topo, err := compose.Start(ctx, compose.Spec{Kind: kind}, opt)
			if err != nil {
				t.Fatal(err)
			}
			defer topo.Close()
			o := conn.Options{Addrs: topo.Addrs(), Topology: kind, User: user, PasswordFile: pwFile, TLS: true, CAFile: ca.CertFile}
			if kind == compose.KindSentinel {
				o.SentinelUser, o.SentinelPasswordFile = user, pwFile
			}
			settings, err := conn.New(o)
			if err != nil {
				t.Fatal(err)
			}
			fault := "failover@0s"
			if kind == compose.KindCluster {
				fault = "failover:replica1@0s"
			}
			run := func(s *conn.Settings) Event {
				return (&Schedule{Faults: mustParse(t, fault), Target: NewDeployment(topo, s)}).Run(ctx, time.Now())[0]
			}
			before := masters(topo)
			// Plaintext, no user: the TLS-only nodes cannot be reached, nothing fails over.
			if ev := run(nil); ev.Err == nil {
				t.Fatalf("failover without the settings: %+v; want an error", ev)
			}
			ev := run(settings)
			if !ev.Fired || ev.Err != nil {
				t.Fatalf("failover with the settings: %+v", ev)
			}
			for masters(topo) == before {
				if ctx.Err() != nil {
					t.Fatalf("masters still %s after the failover", before)
				}
				time.Sleep(50 * time.Millisecond)
			}
			// A wrong password: refused, and the error does not carry what was sent.
			bad := o
			bad.PasswordFile = conntest.PasswordFile(t, "wrong-"+password)
			if kind == compose.KindSentinel {
				bad.SentinelPasswordFile = bad.PasswordFile
			}
			badSettings, err := conn.New(bad)
			if err != nil {
				t.Fatal(err)
			}
			if ev := run(badSettings); ev.Err == nil || strings.Contains(ev.Err.Error(), password) {
				t.Errorf("failover with a wrong password: %v; want an error without the password", ev.Err)
			}
		})
	}
}

// masters lists the masters topo describes now.
func masters(topo compose.Topology) string {
	var ms []string
	for _, n := range topo.Describe().Nodes {
		if n.Role == compose.RoleMaster {
			ms = append(ms, n.Addr)
		}
	}
	return strings.Join(ms, ",")
}
