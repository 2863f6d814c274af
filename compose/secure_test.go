package compose

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/conn/certgen"
	"github.com/redis/rueidis"
)

// secureOptions are NativeOptions for servers that speak TLS only, with certificates from a
// throwaway CA, and require user "bench"; and the TLS config that trusts that CA.
func secureOptions(t *testing.T) (NativeOptions, *tls.Config) {
	t.Helper()
	ca, err := certgen.NewCA(t.TempDir(), "compose test CA")
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := ca.Issue(certgen.Cert{})
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(ca.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return NativeOptions{
		TLS:  &NativeTLS{CertFile: cert, KeyFile: key, CAFile: ca.CertFile},
		Auth: &NativeAuth{User: "bench", Password: "pw-0123456789"},
	}, &tls.Config{RootCAs: pool}
}

// Every node of every topology speaks TLS only and requires the user, replication and the
// cluster bus included (the topologies would not become ready otherwise).
func TestSecureTopologies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sentinel deployment and a cluster")
	}
	t.Parallel() // its own servers; most of its time is waiting for them to be ready
	opt, trust := secureOptions(t)
	ctx := t.Context()
	single := startTest(t, opt)
	sentinel, err := StartSentinel(ctx, opt, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sentinel.Close()
	cluster, err := StartCluster(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()

	for _, c := range []struct {
		name string
		o    rueidis.ClientOption
	}{
		{"single", rueidis.ClientOption{InitAddress: single.Addrs(), ForceSingleClient: true}},
		{"sentinel", rueidis.ClientOption{InitAddress: sentinel.Addrs(), Sentinel: rueidis.SentinelOption{MasterSet: sentinel.MasterName(),
			Username: "bench", Password: "pw-0123456789", TLSConfig: trust}}},
		{"cluster", rueidis.ClientOption{InitAddress: cluster.Addrs()}},
	} {
		c.o.DisableCache, c.o.Username, c.o.Password, c.o.TLSConfig = true, "bench", "pw-0123456789", trust
		rdb, err := rueidis.NewClient(c.o)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if err := rdb.Do(ctx, rdb.B().Set().Key("k").Value("v").Build()).Error(); err != nil {
			t.Errorf("%s: SET as the user over TLS: %v", c.name, err)
		}
		rdb.Close()

		anon := c.o
		anon.Username, anon.Password = "", ""
		anon.Sentinel.Username, anon.Sentinel.Password = "", ""
		if rdb, err := rueidis.NewClient(anon); err == nil {
			err = rdb.Do(ctx, rdb.B().Ping().Build()).Error()
			rdb.Close()
			if err == nil || !strings.Contains(err.Error(), "NOAUTH") {
				t.Errorf("%s: PING without the user: %v, want NOAUTH", c.name, err)
			}
		}
	}
	// No plaintext port: the addresses are the TLS ports, and a plaintext client gets nowhere.
	plain, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: single.Addrs(), ForceSingleClient: true, DisableCache: true,
		Username: "bench", Password: "pw-0123456789"})
	if err == nil {
		plain.Close()
		t.Error("a plaintext client connected to the TLS port")
	}
	if strings.Contains(single.Log()+cluster.masters[0].Log(), "pw-0123456789") {
		t.Error("a server log shows the password")
	}
}
