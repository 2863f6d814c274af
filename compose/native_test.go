package compose

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMissingBinary(t *testing.T) {
	nonExec := filepath.Join(t.TempDir(), "redis-server")
	if err := os.WriteFile(nonExec, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		binary   string
		emptyEnv bool // PATH holds no redis-server
		notFound bool // wraps ErrRedisServerNotFound
		want     []string
		notWant  string
	}{
		{
			name: "default not in PATH", emptyEnv: true, notFound: true,
			want: []string{"redis-server not found in PATH", "apt-get install redis-server", "brew install redis", "--addr"},
		},
		{
			name: "explicit path does not exist", binary: "/nonexistent/redis-server", notFound: true,
			want:    []string{`"/nonexistent/redis-server" does not exist`, "apt-get install redis-server", "--addr"},
			notWant: "not found in PATH",
		},
		{
			name: "other name not in PATH", binary: "redis-server-9", emptyEnv: true, notFound: true,
			want: []string{`"redis-server-9" not found in PATH`, "apt-get install redis-server"},
		},
		{
			name: "exists but not executable", binary: nonExec,
			want:    []string{nonExec, "cannot be used"},
			notWant: "not found in PATH",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.emptyEnv {
				t.Setenv("PATH", t.TempDir())
			}
			_, err := StartSingle(t.Context(), NativeOptions{Binary: tt.binary})
			if err == nil {
				t.Fatal("StartSingle succeeded")
			}
			if got := errors.Is(err, ErrRedisServerNotFound); got != tt.notFound {
				t.Errorf("errors.Is(err, ErrRedisServerNotFound) = %v, want %v; err: %v", got, tt.notFound, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			if tt.notWant != "" && strings.Contains(err.Error(), tt.notWant) {
				t.Errorf("error says %q: %v", tt.notWant, err)
			}
		})
	}
}

func TestNegativeStartTimeout(t *testing.T) {
	_, err := StartSingle(t.Context(), NativeOptions{StartTimeout: -time.Second})
	if err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("err = %v, want a negative StartTimeout error", err)
	}
}

func TestLastLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"empty", "", 3, ""},
		{"fewer lines than n", "a\nb\n", 3, "a\nb"},
		{"exactly n", "a\nb\nc\n", 3, "a\nb\nc"},
		{"more than n", "a\nb\nc\nd\n", 2, "c\nd"},
		{"no trailing newline", "a\nb\nc", 1, "c"},
		{"zero", "a\nb", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lastLines(tt.in, tt.n); got != tt.want {
				t.Errorf("lastLines(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
			}
		})
	}
}

func TestReadLogTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("first line\nsecond\nthird\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		max  int64
		want string
	}{
		{1 << 10, "first line\nsecond\nthird\n"},
		{10, "third\n"},         // the cut-off partial line is dropped
		{13, "second\nthird\n"}, // the cut falls exactly at a line start
		{12, "third\n"},
		{14, "second\nthird\n"},
	}
	for _, tt := range tests {
		if got := readLogTail(path, tt.max); got != tt.want {
			t.Errorf("readLogTail(max %d) = %q, want %q", tt.max, got, tt.want)
		}
	}
	if got := readLogTail(filepath.Join(t.TempDir(), "missing"), 10); got != "" {
		t.Errorf("missing log = %q, want empty", got)
	}
}
