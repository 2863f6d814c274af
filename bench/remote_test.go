package bench

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/target"
)

// The processes of a run on a topology started with auth and TLS connect as its user, with the
// name its certificate carries on docker (sentinel's container addresses are not in it), and
// are never given the password file (the environment carries the password). The certificate
// itself is checked in package target.
func TestSecureConnOfProcesses(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{target.ProviderNative, target.ProviderDocker} {
		s, err := target.NewSecure(filepath.Join(t.TempDir(), "secrets"), provider, true, true)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Remove()
		c := secureConn(s, compose.KindSentinel)
		args := strings.Join(WorkerSpec{Driver: "naive", Conn: c}.Filled().Args(), " ")
		named := strings.Contains(args, "--tls-server-name "+target.SecureServerName)
		if named != (provider == target.ProviderDocker) {
			t.Errorf("%s: worker flags %q: --tls-server-name for docker only", provider, args)
		}
		for _, want := range []string{"--tls", "--tls-ca-file " + s.CAFile, "--user " + target.SecureUser, "--sentinel-user " + target.SecureUser} {
			if !strings.Contains(args, want) {
				t.Errorf("%s: worker flags %q lack %q", provider, args, want)
			}
		}
		if fields := strings.Fields(args); slices.Contains(fields, "--password-file") || slices.Contains(fields, "--sentinel-password-file") {
			t.Errorf("%s: worker flags %q name a password file", provider, args)
		}
	}
}
