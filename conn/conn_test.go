package conn

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/conn/conntest"
)

func noEnv(string) string { return "" }

func TestNewPasswordSources(t *testing.T) {
	file := conntest.PasswordFile(t, "from-file")
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	tests := []struct {
		name string
		opt  Options
		want string
	}{
		{"none", Options{Addrs: []string{"h:1"}, Getenv: noEnv}, ""},
		{"file", Options{Addrs: []string{"h:1"}, PasswordFile: file, Getenv: noEnv}, "from-file"},
		{"url", Options{Addrs: []string{"redis://u:from-url@h:1"}, Getenv: noEnv}, "from-url"},
		{"env", Options{Addrs: []string{"h:1"}, Getenv: env(map[string]string{EnvPassword: "e1", EnvRedisCLIAuth: "e2"})}, "e1"},
		{"redis-cli env", Options{Addrs: []string{"h:1"}, Getenv: env(map[string]string{EnvRedisCLIAuth: "e2"})}, "e2"},
		{"file beats env", Options{Addrs: []string{"h:1"}, PasswordFile: file, Getenv: env(map[string]string{EnvPassword: "e1"})}, "from-file"},
	}
	for _, tt := range tests {
		s, err := New(tt.opt)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if s.password != tt.want {
			t.Errorf("%s: password %q, want %q", tt.name, s.password, tt.want)
		}
		if tt.want != "" {
			for _, text := range append(s.Shown(), s.String(), strings.Join(s.ChildAddrs(), ","), strings.Join(s.Warnings(), ";"), s.Classify("h:1", errors.New("x "+tt.want)).Error()) {
				if strings.Contains(text, tt.want) {
					t.Errorf("%s: %q shows the password", tt.name, text)
				}
			}
			if got := strings.Join(s.Env(), " "); got != EnvPassword+"="+tt.want {
				t.Errorf("%s: Env() = %q", tt.name, got)
			}
		}
	}
	s, _ := New(Options{Addrs: []string{"redis://u:from-url@h:1"}, Getenv: noEnv})
	if w := s.Warnings(); len(w) != 1 || !strings.Contains(w[0], "process list") {
		t.Errorf("a password in a URL: warnings %q, want one about the process list", w)
	}
	if got := s.String(); got != "redis://u:***@h:1" {
		t.Errorf("String() = %q", got)
	}
}

func TestNewBadInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unreadable := filepath.Join(dir, "unreadable")
	if err := os.WriteFile(unreadable, []byte("pw"), 0o000); err != nil {
		t.Fatal(err)
	}
	ca := conntest.NewCA(t, "test CA")
	cert, key := ca.Issue(t, conntest.Cert{})
	oldCert, oldKey := ca.Issue(t, conntest.Cert{Name: "old", NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	pw := conntest.PasswordFile(t, "pw")
	tests := []struct {
		name string
		opt  Options
		says string
	}{
		{"empty password file", Options{Addrs: []string{"h:1"}, PasswordFile: empty}, "is empty"},
		{"missing password file", Options{Addrs: []string{"h:1"}, PasswordFile: filepath.Join(dir, "nope")}, "--password-file"},
		{"user without password", Options{Addrs: []string{"h:1"}, User: "bench"}, "has no password"},
		{"two users", Options{Addrs: []string{"redis://a@h:1"}, User: "b", PasswordFile: pw}, "give one user"},
		{"password twice", Options{Addrs: []string{"redis://a:x@h:1"}, PasswordFile: pw}, "give it once"},
		{"mixed tls", Options{Addrs: []string{"rediss://h:1", "redis://h:2"}}, "rediss://"},
		{"tls with redis://", Options{Addrs: []string{"redis://h:1"}, TLS: true}, "write rediss://"},
		{"same address twice", Options{Addrs: []string{"h:1", "redis://h:1"}}, "given twice"},
		{"bad scheme", Options{Addrs: []string{"tcp://h:1"}}, "scheme"},
		{"bad port", Options{Addrs: []string{"redis://h:70000"}}, "port"},
		{"insecure and CA", Options{Addrs: []string{"h:1"}, InsecureSkipVerify: true, CAFile: ca.CertFile}, "skip-verify would win"},
		{"CA file missing", Options{Addrs: []string{"h:1"}, CAFile: filepath.Join(dir, "ca.pem")}, "--tls-ca-file"},
		{"CA file not PEM", Options{Addrs: []string{"h:1"}, CAFile: pw}, "no PEM certificate"},
		{"cert without key", Options{Addrs: []string{"h:1"}, CertFile: cert}, "needs --tls-key-file"},
		{"key without cert", Options{Addrs: []string{"h:1"}, KeyFile: key}, "needs --tls-cert-file"},
		{"missing key file", Options{Addrs: []string{"h:1"}, CertFile: cert, KeyFile: filepath.Join(dir, "k.pem")}, "--tls-key-file"},
		{"key of another cert", Options{Addrs: []string{"h:1"}, CertFile: cert, KeyFile: oldKey}, "--tls-cert-file"},
		{"expired client cert", Options{Addrs: []string{"h:1"}, CertFile: oldCert, KeyFile: oldKey}, "not now"},
		{"sentinel user on single", Options{Addrs: []string{"h:1"}, Topology: "single", SentinelUser: "s"}, "for --topology sentinel"},
		{"unix on cluster", Options{Addrs: []string{"unix:///tmp/r.sock"}, Topology: "cluster"}, "single and masters"},
		{"unix with tls", Options{Addrs: []string{"unix:///tmp/r.sock"}, TLS: true}, "TCP ports only"},
		{"db on cluster", Options{Addrs: []string{"redis://h:1/2"}, Topology: "cluster"}, "only database 0"},
		{"two dbs", Options{Addrs: []string{"redis://h:1/2", "redis://h:2/3"}}, "give one"},
	}
	if os.Geteuid() != 0 { // root reads any file
		tests = append(tests, struct {
			name string
			opt  Options
			says string
		}{"unreadable password file", Options{Addrs: []string{"h:1"}, PasswordFile: unreadable}, "permission denied"})
	}
	for _, tt := range tests {
		tt.opt.Getenv = noEnv
		_, err := New(tt.opt)
		if err == nil {
			t.Errorf("%s: New succeeded", tt.name)
			continue
		}
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: %v, want ErrBadInput saying %q", tt.name, err, tt.says)
		}
		if strings.Contains(err.Error(), "pw\n") {
			t.Errorf("%s: error shows the password: %v", tt.name, err)
		}
	}
}

func TestNewTLSImplied(t *testing.T) {
	ca := conntest.NewCA(t, "test CA")
	for _, opt := range []Options{
		{Addrs: []string{"rediss://h:1"}},
		{Addrs: []string{"h:1"}, CAFile: ca.CertFile},
		{Addrs: []string{"h:1"}, TLS: true},
	} {
		opt.Getenv = noEnv
		s, err := New(opt)
		if err != nil {
			t.Fatal(err)
		}
		if !s.TLS() {
			t.Errorf("%+v: TLS off", opt)
		}
	}
	s, err := New(Options{Addrs: []string{"h:1"}, TLS: true, InsecureSkipVerify: true, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(s.Warnings(), ";"); !strings.Contains(w, "not checked") {
		t.Errorf("skip-verify: warnings %q", w)
	}
	if d := s.Describe()["tls"]; !strings.Contains(d, "NOT verified") {
		t.Errorf("Describe tls = %q", d)
	}
}
