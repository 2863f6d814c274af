package target

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/conn"
)

// AttachSettings offline takes the files as given; a bad address and a unix socket behind
// proxies are bad input.
func TestAttachSettings(t *testing.T) {
	t.Parallel()
	opt := conn.Options{Addrs: []string{"127.0.0.1:6379"}, Topology: "single", PasswordFile: "/nonexistent/pass", CAFile: "/nonexistent/ca.pem"}
	s, err := AttachSettings(opt, true, false)
	if err != nil || s == nil {
		t.Errorf("offline: %v; want the settings, the files not read", err)
	}
	if _, err := AttachSettings(opt, false, false); !errors.Is(err, ErrBadSpec) {
		t.Errorf("online, files missing: %v; want ErrBadSpec", err)
	}
	unix := conn.Options{Addrs: []string{"unix:///tmp/redis.sock"}, Topology: "single"}
	if _, err := AttachSettings(unix, true, true); !errors.Is(err, ErrBadSpec) || err.Error() != "--net proxies TCP connections; it cannot sit in front of a unix:// socket" {
		t.Errorf("unix behind proxies: %v", err)
	}
}

// ParseTopology takes a master name for sentinel only, without spaces.
func TestParseTopology(t *testing.T) {
	t.Parallel()
	if s, err := ParseTopology("sentinel", "orders", true); err != nil || s.MasterName != "orders" {
		t.Errorf("sentinel orders: %+v, %v", s, err)
	}
	for _, tc := range []struct{ topo, master, want string }{
		{"ring", "", "--topology: "},
		{"single", "m", "--master-name is for --topology sentinel, not single"},
		{"sentinel", "a b", `--master-name "a b": want a sentinel master name without spaces`},
	} {
		if _, err := ParseTopology(tc.topo, tc.master, tc.master != ""); !errors.Is(err, ErrBadSpec) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s %q: %v; want ErrBadSpec, %q", tc.topo, tc.master, err, tc.want)
		}
	}
}

// Describe names the topology, the provider and its protection.
func TestSpecDescribe(t *testing.T) {
	t.Parallel()
	s := Spec{Topology: compose.Spec{Kind: compose.KindCluster}, Provider: ProviderNative, Auth: true, TLS: true}
	if got, want := s.Describe(), "starting a private cluster topology (native, an ACL user with a random password, TLS only; use --addr to attach to an existing Redis)"; got != want {
		t.Errorf("Describe = %q; want %q", got, want)
	}
}

// CheckProvider takes native or docker, an image for docker only and a valid one, and no
// --provider with --addr; each refusal names its flag and wraps ErrBadSpec.
func TestCheckProvider(t *testing.T) {
	t.Parallel()
	given := func(names ...string) func(string) bool {
		return func(n string) bool { return slices.Contains(names, n) }
	}
	for _, tc := range []struct {
		name, provider, image string
		attached              bool
		given                 []string
		want                  string // "" for valid
	}{
		{"native", ProviderNative, "", false, nil, ""},
		{"docker with an image", ProviderDocker, "redis:7.2", false, []string{"provider", "image"}, ""},
		{"native, attached, provider not given", ProviderNative, "", true, nil, ""},
		{"unknown provider", "podman", "", false, []string{"provider"}, `--provider "podman": want native or docker`},
		{"provider with --addr", ProviderDocker, "", true, []string{"provider"}, "with --addr it attaches to yours instead"},
		{"image for native", ProviderNative, "redis:7.2", false, []string{"image"}, "--image is for --provider docker"},
		{"bad image", ProviderDocker, "Not An Image", false, []string{"provider", "image"}, "--image: "},
	} {
		err := CheckProvider(tc.provider, tc.image, tc.attached, given(tc.given...))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v; want valid", tc.name, err)
		case tc.want != "" && (!errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v; want ErrBadSpec containing %q", tc.name, err, tc.want)
		}
	}
}
