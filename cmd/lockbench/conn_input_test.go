//go:build unix

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/conn/conntest"
)

// okServer is a TCP server that answers +OK to every command, as no Redis does: it stands for
// a proxy or a stub that accepts anything. It stops when the test ends.
func okServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					// A command is an array of bulk strings: *N, then N times $len and the bytes.
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "*")))
					for range n {
						head, err := r.ReadString('\n')
						if err != nil {
							return
						}
						size, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(head, "$")))
						if _, err := r.Discard(size + 2); err != nil {
							return
						}
					}
					if _, err := c.Write([]byte("+OK\r\n")); err != nil {
						return
					}
				}
			})
		}
	})
	return ln.Addr().String()
}

// Each way of pointing lockbench at something that is not the Redis it can use is named for
// what it is, exit 2, before anything is measured, and without the password.
func TestConnCauses(t *testing.T) {
	t.Parallel()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "<html>not redis</html>")
	}))
	t.Cleanup(web.Close)
	ok := okServer(t)
	srv := redistest.NewServer(t)
	aclSetUser(t, srv.Addr(), "noinfo", "on", ">"+connTestPassword, "~*", "&*", "+@all", "-info")
	aclSetUser(t, srv.Addr(), "noselect", "on", ">"+connTestPassword, "~*", "&*", "+@all", "-select")
	pw := conntest.PasswordFile(t, connTestPassword)
	cases := []struct {
		name string
		args []string
		want string
		not  string
	}{
		{"an HTTP port", []string{"--addr", strings.TrimPrefix(web.URL, "http://")}, "does not speak Redis's protocol", "unknown message type"},
		{"+OK to everything", []string{"--addr", ok}, "answers make no sense for Redis", "(of :)"},
		{"no +info", []string{"--addr", "redis://noinfo@" + srv.Addr(), "--password-file", pw}, `user "noinfo" may not run INFO`, "authentication failed"},
		{"no +select", []string{"--addr", "redis://noselect@" + srv.Addr() + "/1", "--password-file", pw}, `user "noselect" may not run SELECT`, "authentication failed"},
		{"database out of range", []string{"--addr", "redis://" + srv.Addr() + "/99"}, "has no database 99", ""},
	}
	for _, cmd := range []string{"check", "run"} {
		for _, tc := range cases {
			t.Run(cmd+"/"+tc.name, func(t *testing.T) {
				var out, errb bytes.Buffer
				args := append([]string{cmd}, tc.args...)
				if cmd == "run" {
					args = append(args, "--duration", "1s", "--warmup", "0s", "--no-results", "--driver", "lockcore")
				}
				start := time.Now()
				code := dispatch(args, &out, &errb)
				if took := time.Since(start); took > 20*time.Second {
					t.Errorf("took %v to refuse", took)
				}
				all := out.String() + errb.String()
				if code != exitUsage || !strings.Contains(all, tc.want) {
					t.Errorf("exit %d, output %q; want exit %d containing %q", code, all, exitUsage, tc.want)
				}
				if tc.not != "" && strings.Contains(all, tc.not) {
					t.Errorf("output %q still says %q", all, tc.not)
				}
				if strings.Contains(all, "acq/s") {
					t.Errorf("measured before refusing:\n%s", all)
				}
				assertNoPassword(t, "", map[string]string{"output": all})
			})
		}
	}
}

// Inputs that used to be misread: a password-only URL (redis-cli -u's reading), a
// --password-file argument that may be the password, an empty --addr (an unset variable in CI).
func TestConnInputs(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t, "--requirepass", connTestPassword)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"password-only URL", []string{"--addr", "redis://" + connTestPassword + "@" + srv.Addr()}, exitOK, "single deployment at redis://***@" + srv.Addr()},
		{"password file argument", []string{"--addr", srv.Addr(), "--password-file", connTestPassword}, exitUsage, "the file given to --password-file cannot be read: no such file"},
		{"empty --addr", []string{"--addr", ""}, exitUsage, "--addr is empty"},
		{"empty --referee", []string{"--referee", ""}, exitUsage, "--referee is empty"},
		{"empty --collect", []string{"--procs", "2", "--collect", ""}, exitUsage, "--collect is empty"},
	}
	for _, cmd := range []string{"check", "run", "sweep"} {
		for _, tc := range cases {
			if cmd != "check" && tc.code == exitOK {
				continue // a measured run is not needed to read the URL
			}
			if cmd != "run" && (strings.Contains(tc.name, "referee") || strings.Contains(tc.name, "collect")) {
				continue // run's flags
			}
			t.Run(cmd+"/"+tc.name, func(t *testing.T) {
				var out, errb bytes.Buffer
				args := append([]string{cmd}, tc.args...)
				if cmd != "check" {
					args = append(args, "--duration", "1s", "--warmup", "0s", "--no-results")
				}
				code := dispatch(args, &out, &errb)
				all := out.String() + errb.String()
				if code != tc.code || !strings.Contains(all, tc.want) {
					t.Errorf("exit %d, output %q; want exit %d containing %q", code, all, tc.code, tc.want)
				}
				if strings.Contains(all, "acq/s") || strings.Contains(all, "starting a private") {
					t.Errorf("ran instead of refusing:\n%s", all)
				}
				assertNoPassword(t, "", map[string]string{"output": all})
			})
		}
	}
}
