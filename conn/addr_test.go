package conn

import (
	"errors"
	"strings"
	"testing"
)

func TestParseAddr(t *testing.T) {
	tests := []struct {
		in   string
		want Addr
	}{
		// As today.
		{"127.0.0.1:6379", Addr{Dial: "127.0.0.1:6379", DB: -1}},
		{"[::1]:7000", Addr{Dial: "[::1]:7000", DB: -1}},
		// URLs.
		{"redis://10.0.0.5", Addr{Dial: "10.0.0.5:6379", URL: true, DB: -1}},
		{"redis://10.0.0.5:7000/3", Addr{Dial: "10.0.0.5:7000", URL: true, DB: 3}},
		{"rediss://bench@host.example:6380", Addr{Dial: "host.example:6380", URL: true, TLS: true, User: "bench", DB: -1}},
		{"rediss://bench:s3cr%40t@h:1/0", Addr{Dial: "h:1", URL: true, TLS: true, User: "bench", Password: "s3cr@t", HasPassword: true, DB: 0}},
		{"redis://:pw@h:2", Addr{Dial: "h:2", URL: true, Password: "pw", HasPassword: true, DB: -1}},
		{"redis://[::1]:7000", Addr{Dial: "[::1]:7000", URL: true, DB: -1}},
		{"unix:///run/redis.sock", Addr{Dial: "/run/redis.sock", URL: true, Unix: true, DB: -1}},
		{"unix:///run/redis.sock?db=2", Addr{Dial: "/run/redis.sock", URL: true, Unix: true, DB: 2}},
	}
	for _, tt := range tests {
		got, err := ParseAddr(tt.in)
		if err != nil {
			t.Errorf("ParseAddr(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseAddr(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseAddrBad(t *testing.T) {
	tests := []struct{ in, says string }{
		{"localhost", "want host:port"},
		{":6379", "want host:port"},
		{"h:0", "port"},
		{"h:65536", "port"},
		{"h:x", "port"},
		{"http://h:1", `scheme "http"`},
		{"redis://h:99999", "port"},
		{"redis://h:", "empty port"},
		{"redis://:secretpw@h:abc", "port"},
		{"redis:///3", "no host"},
		{"redis://h:1/x", "database number"},
		{"redis://h:1?protocol=3", "no URL options"},
		{"unix://relative/path", "absolute"},
		{"unix:///s?timeout=1", "only ?db"},
	}
	for _, tt := range tests {
		_, err := ParseAddr(tt.in)
		if err == nil {
			t.Errorf("ParseAddr(%q) succeeded", tt.in)
			continue
		}
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("ParseAddr(%q) = %v, want ErrBadInput saying %q", tt.in, err, tt.says)
		}
		if strings.Contains(err.Error(), "secretpw") {
			t.Errorf("ParseAddr(%q) error shows the password: %v", tt.in, err)
		}
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"redis://bench:pw@h:1", "redis://bench:***@h:1"},
		{"rediss://:pw@h:1/2", "rediss://:***@h:1/2"},
		{"rediss://u:p@ss@h:1", "rediss://u:***@h:1"}, // an unescaped '@' in the password
		{"redis://bench@h:1", "redis://***@h:1"},      // redis-cli reads it as a password
		{"h:1", "h:1"},
		{"see redis://a:b@h:1/0 there", "see redis://a:***@h:1/0 there"},
	}
	for _, tt := range tests {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	args := RedactArgs([]string{"run", "--addr", "redis://u:pw@a:1,redis://u:pw@b:1", "--addr=rediss://u:pw@c:1"})
	if got := strings.Join(args, " "); strings.Contains(got, "pw") {
		t.Errorf("RedactArgs left a password: %s", got)
	}
	if got := stripPassword("rediss://u:pw@c:1/2"); got != "rediss://u@c:1/2" {
		t.Errorf("stripPassword = %q", got)
	}
}
