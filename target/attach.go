package target

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/conn"
)

// AttachSettings makes the connection settings of a deployment to attach to (Spec.Attach) from
// opt, as conn.New does. With offline it reads no file and no environment: the password and TLS
// files are taken as given and the environment as holding a password, for checking command
// lines that name files of another machine. proxied says the connections go through network
// proxies (Spec.Net), which carry TCP only. The error wraps ErrBadSpec; its text is conn's
// complaint alone, as lockbench prints it.
func AttachSettings(opt conn.Options, offline, proxied bool) (*conn.Settings, error) {
	if offline {
		opt.TLS = opt.TLS || opt.CAFile != "" || opt.CertFile != "" || opt.KeyFile != ""
		opt.PasswordFile, opt.SentinelPasswordFile, opt.CAFile, opt.CertFile, opt.KeyFile = "", "", "", "", ""
		opt.Getenv = func(name string) string {
			if name == conn.EnvPassword || name == conn.EnvSentinelPassword {
				return "stand-in"
			}
			return ""
		}
	}
	s, err := conn.New(opt)
	if err != nil {
		return nil, &badSpecError{errors.New(strings.TrimPrefix(err.Error(), conn.ErrBadInput.Error()+": "))}
	}
	if proxied && s.Unix() {
		return nil, &badSpecError{errors.New("--net proxies TCP connections; it cannot sit in front of a unix:// socket")}
	}
	return s, nil
}

// ParseTopology reads a deployment's shape as lockbench run, sweep, worker and check take it:
// topology in compose.ParseSpec syntax and, when masterGiven, a sentinel's master name (no
// default is filled: "" is the topology's own). The error wraps ErrBadSpec and names
// --topology or --master-name.
func ParseTopology(topology, masterName string, masterGiven bool) (compose.Spec, error) {
	spec, err := compose.ParseSpec(topology)
	if err != nil {
		return spec, &badSpecError{fmt.Errorf("--topology: %v", err)}
	}
	if masterGiven {
		if spec.Kind != compose.KindSentinel {
			return spec, &badSpecError{fmt.Errorf("--master-name is for --topology sentinel, not %s", spec)}
		}
		if strings.TrimSpace(masterName) == "" || strings.ContainsFunc(masterName, unicode.IsSpace) {
			return spec, &badSpecError{fmt.Errorf("--master-name %q: want a sentinel master name without spaces", masterName)}
		}
		spec.MasterName = masterName
	}
	return spec, nil
}

// CheckProvider checks how a command line asks lockbench to start its topology: provider
// (ProviderNative or ProviderDocker) and image (a Redis image reference, for ProviderDocker).
// given says which of the flags "provider" and "image" were set; attached, that the deployment
// is given (--addr) instead, which lockbench does not start. The error wraps ErrBadSpec and
// names the flag.
func CheckProvider(provider, image string, attached bool, given func(flag string) bool) error {
	switch provider {
	case ProviderNative, ProviderDocker:
	default:
		return &badSpecError{fmt.Errorf("--provider %q: want native or docker", provider)}
	}
	if given("provider") && attached {
		return &badSpecError{errors.New("--provider says how lockbench starts a topology; with --addr it attaches to yours instead")}
	}
	if given("image") {
		if provider != ProviderDocker {
			return &badSpecError{errors.New("--image is for --provider docker")}
		}
		if err := docker.CheckImageRef(image); err != nil {
			return &badSpecError{fmt.Errorf("--image: %v", err)}
		}
	}
	return nil
}

// Describe is the line that says what Open is about to do with s, as lockbench logs it: attach
// to a deployment at its addresses, or start a private topology with its provider and how it
// is protected.
func (s Spec) Describe() string {
	if s.Attach != nil {
		return fmt.Sprintf("attaching to the %s deployment at %s", s.Topology, s.Attach)
	}
	var secure string
	switch {
	case s.Auth && s.TLS:
		secure = ", an ACL user with a random password, TLS only"
	case s.Auth:
		secure = ", an ACL user with a random password"
	case s.TLS:
		secure = ", TLS only"
	}
	return fmt.Sprintf("starting a private %s topology (%s%s; use --addr to attach to an existing Redis)", s.Topology, s.Provider, secure)
}
