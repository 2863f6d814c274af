package docker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
)

// The readiness probes decide when a Docker topology is usable; they run here against a real
// redis-server, since no Docker engine is needed to check how they read Redis's replies.
func TestCommandReadsReplies(t *testing.T) {
	srv := redistest.NewServer(t)
	ctx := context.Background()
	cases := []struct {
		args    []string
		want    string // substring of the reply
		wantErr string // substring of the error, if one is expected
	}{
		{[]string{"PING"}, "PONG", ""},
		{[]string{"SET", "k", "a value with spaces\r\nand a newline"}, "OK", ""},
		{[]string{"GET", "k"}, "a value with spaces\r\nand a newline", ""},
		{[]string{"INCR", "n"}, "1", ""},
		{[]string{"INFO", "replication"}, "role:master", ""},
		{[]string{"NOSUCHCOMMAND"}, "", "unknown command"},
		{[]string{"KEYS", "*"}, "", "unexpected reply"}, // arrays are not a probe's business
	}
	for _, tc := range cases {
		got, err := command(ctx, srv.Addr(), tc.args...)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%q: reply %q, error %v; want an error containing %q", tc.args, got, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || !strings.Contains(got, tc.want)):
			t.Errorf("%q: reply %q, error %v; want %q", tc.args, got, err, tc.want)
		}
	}
	info, err := command(ctx, srv.Addr(), "INFO", "replication")
	if err != nil {
		t.Fatal(err)
	}
	if role := infoField(info, "role"); role != "master" {
		t.Errorf("infoField(role) = %q in %q", role, info)
	}
	if v := infoField(info, "no_such_field"); v != "" {
		t.Errorf("infoField of a missing field = %q", v)
	}
}

func TestPollEndsWithTheLastReason(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	notYet := errors.New("replicas: 1 of 2")
	calls := 0
	err := poll(ctx, "replicas", func(context.Context) error { calls++; return notYet })
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "replicas: 1 of 2") || calls < 2 {
		t.Fatalf("poll: %v after %d probes; want the deadline, the last reason and several probes", err, calls)
	}
	calls = 0
	if err := poll(context.Background(), "x", func(context.Context) error {
		if calls++; calls < 3 {
			return notYet
		}
		return nil
	}); err != nil || calls != 3 {
		t.Fatalf("poll: %v after %d probes; want success on the third", err, calls)
	}
}
