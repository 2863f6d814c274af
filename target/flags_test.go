package target

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/spf13/pflag"
)

// parseFlags registers Flags on a new flag set (run's, or check's when attached) and parses args.
func parseFlags(t *testing.T, attachedOnly bool, args ...string) (*Flags, *pflag.FlagSet) {
	t.Helper()
	f := &Flags{Offline: true}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	if attachedOnly {
		f.RegisterAttached(fs)
	} else {
		f.Register(fs)
	}
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return f, fs
}

// TestFlagsCheck: the deployment's flags are checked in the order run checks them (shape,
// provider, connection), each complaint naming its flag and wrapping ErrBadSpec.
func TestFlagsCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string // "" for none
	}{
		{nil, ""},
		{[]string{"--topology", "ring"}, "--topology: "},
		{[]string{"--master-name", "orders"}, "--master-name is for --topology sentinel, not single"},
		{[]string{"--provider", "podman"}, `--provider "podman": want native or docker`},
		{[]string{"--image", "redis:7"}, "--image is for --provider docker"},
		{[]string{"--addr", "127.0.0.1:6379", "--provider", "native"}, "--provider says how lockbench starts a topology"},
		{[]string{"--addr", ""}, EmptyAddr},
		{[]string{"--user", "bench"}, "--user is for a deployment given with --addr; for the Redis lockbench starts, --auth and --tls make the user, password and certificates"},
		{[]string{"--tls-ca-file", "ca.pem"}, "--tls-ca-file is for a deployment given with --addr"},
		{[]string{"--tls", "--auth"}, ""},
		{[]string{"--addr", "127.0.0.1:6379", "--auth"}, "--auth is for the topology lockbench starts; for yours, give --user and --password-file"},
		{[]string{"--addr", "127.0.0.1:6379", "--user", "bench", "--password-file", "/nonexistent"}, ""},
		{[]string{"--addr", "redis://a b"}, "redis://a b"},
	} {
		f, fs := parseFlags(t, false, tc.args...)
		err := f.CheckShape(fs.Changed)
		if err == nil {
			err = f.CheckConn(fs, false)
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.want != "" && (!errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: error %v, want ErrBadSpec containing %q", tc.args, err, tc.want)
		}
	}
}

// TestFlagsSpec: the Spec Open takes: attached with the settings, the connection flags handed
// to generator processes without the password files; or started, secured by --auth and --tls.
func TestFlagsSpec(t *testing.T) {
	t.Parallel()
	f, fs := parseFlags(t, false, "--topology", "sentinel", "--master-name", "orders", "--addr", "10.0.0.5:26379",
		"--user", "bench", "--password-file", "/nonexistent/pass", "--tls-server-name", "redis.internal")
	if err := f.CheckShape(fs.Changed); err != nil {
		t.Fatal(err)
	}
	if err := f.CheckConn(fs, false); err != nil {
		t.Fatal(err)
	}
	s := f.Spec()
	if s.Attach == nil || s.Attach != f.Settings || s.Topology.Kind != compose.KindSentinel || s.Topology.MasterName != "orders" || s.Provider != "" {
		t.Errorf("attached: %+v", s)
	}
	if want := []string{"--user=bench", "--tls-server-name=redis.internal"}; !slices.Equal(f.ChildArgs, want) {
		t.Errorf("generator processes' flags %q, want %q (no password file)", f.ChildArgs, want)
	}
	if !slices.Equal(f.Conn.Addrs, []string{"10.0.0.5:26379"}) || f.Conn.Topology != compose.KindSentinel {
		t.Errorf("conn options: addrs %q, topology %q", f.Conn.Addrs, f.Conn.Topology)
	}

	f, fs = parseFlags(t, false, "--topology", "cluster", "--provider", "docker", "--auth")
	if err := f.CheckShape(fs.Changed); err != nil {
		t.Fatal(err)
	}
	if err := f.CheckConn(fs, false); err != nil {
		t.Fatal(err)
	}
	if s := f.Spec(); s.Attach != nil || s.Provider != ProviderDocker || !s.Auth || s.TLS || s.Topology.Kind != compose.KindCluster || !f.StartSecure {
		t.Errorf("started: %+v", s)
	}
}

// TestRegisterAttached: lockbench check's flags have no --provider or --image, and pass the
// provider check as an attach.
func TestRegisterAttached(t *testing.T) {
	t.Parallel()
	f, fs := parseFlags(t, true, "--addr", "127.0.0.1:6379")
	if fs.Lookup("provider") != nil || fs.Lookup("image") != nil || fs.Lookup("auth") == nil {
		t.Error("check's flags: want no --provider or --image, and the connection flags")
	}
	if err := f.CheckShape(fs.Changed); err != nil {
		t.Fatal(err)
	}
	if err := f.CheckConn(fs, true); err != nil || f.Settings == nil {
		t.Errorf("attached: %v", err)
	}
}
