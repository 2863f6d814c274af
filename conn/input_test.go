package conn

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/conn/conntest"
)

// A URL whose user info has no ':' is a password, as redis-cli -u reads it, unless a password
// comes from elsewhere (then it is the ACL user, lockbench's documented
// rediss://bench@host --password-file form). The password is in no text Settings gives out.
func TestPasswordOnlyURL(t *testing.T) {
	const pw = "Pw0nly-9d2e"
	file := conntest.PasswordFile(t, "from-file")
	env := func(k string) string {
		if k == EnvPassword {
			return "from-env"
		}
		return ""
	}
	tests := []struct {
		name               string
		opt                Options
		wantUser, wantPass string
		secret             string // must be in no text
	}{
		{"password only", Options{Addrs: []string{"redis://" + pw + "@h:1"}, Getenv: noEnv}, "", pw, pw},
		{"password only, TLS and db", Options{Addrs: []string{"rediss://" + pw + "@h:1/2"}, Getenv: noEnv, InsecureSkipVerify: true}, "", pw, pw},
		{"password only with --user", Options{Addrs: []string{"redis://" + pw + "@h:1"}, User: "bench", Getenv: noEnv}, "bench", pw, pw},
		{"user, password from the file", Options{Addrs: []string{"redis://bench@h:1"}, PasswordFile: file, Getenv: noEnv}, "bench", "from-file", "from-file"},
		{"user, password from the environment", Options{Addrs: []string{"redis://bench@h:1"}, Getenv: env}, "bench", "from-env", "from-env"},
	}
	for _, tt := range tests {
		s, err := New(tt.opt)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if s.user != tt.wantUser || s.password != tt.wantPass {
			t.Errorf("%s: user %q password %q, want user %q password %q", tt.name, s.user, s.password, tt.wantUser, tt.wantPass)
		}
		texts := append(s.Shown(), s.String(), strings.Join(s.ChildAddrs(), ","), strings.Join(s.Warnings(), ";"),
			strings.Join(RedactArgs(append([]string{"--addr"}, tt.opt.Addrs...)), " "), s.Redact(strings.Join(tt.opt.Addrs, " ")),
			s.Classify("h:1", errors.New("WRONGPASS invalid username-password pair")).Error())
		for _, v := range s.Describe() {
			texts = append(texts, v)
		}
		for _, text := range texts {
			if strings.Contains(text, tt.secret) {
				t.Errorf("%s: %q shows the password", tt.name, text)
			}
		}
	}
	// Bad input that names the URL never shows a password-only user info either.
	for _, opt := range []Options{
		{Addrs: []string{"redis://" + pw + "@h:99999"}, Getenv: noEnv},
		{Addrs: []string{"redis://" + pw + "@h:1"}, User: "bench", PasswordFile: file, Getenv: noEnv},
		{Addrs: []string{"redis://" + pw + "@h:1/x"}, Getenv: noEnv},
	} {
		_, err := New(opt)
		if err == nil || !errors.Is(err, ErrBadInput) {
			t.Errorf("New(%v) = %v, want ErrBadInput", opt.Addrs, err)
			continue
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("New(%v): error shows the password: %v", opt.Addrs, err)
		}
	}
}

// A --password-file that cannot be read is named by its flag, not its argument: someone who
// typed the password itself where the path goes must not see it printed (in CI logs).
func TestPasswordFileNotEchoed(t *testing.T) {
	const typed = "Typed-the-Password-7c1"
	for _, opt := range []Options{
		{Addrs: []string{"h:1"}, PasswordFile: typed, Getenv: noEnv},
		{Addrs: []string{"h:1"}, PasswordFile: filepath.Join(t.TempDir(), typed), Getenv: noEnv},
		{Addrs: []string{"h:1"}, Topology: topoSentinel, SentinelPasswordFile: typed, Getenv: noEnv},
	} {
		_, err := New(opt)
		if err == nil || !errors.Is(err, ErrBadInput) {
			t.Errorf("New = %v, want ErrBadInput", err)
			continue
		}
		if strings.Contains(err.Error(), typed) {
			t.Errorf("the error echoes the argument: %v", err)
		}
		if !strings.Contains(err.Error(), "password-file cannot be read: no such file") {
			t.Errorf("the error does not say the file is missing: %v", err)
		}
	}
}
