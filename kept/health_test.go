package kept

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
)

// closedAddr returns a loopback address nobody listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// answeringAddr returns the address of a listener that accepts and answers line (nothing when
// empty) to each connection's first read, until the test ends.
func answeringAddr(t *testing.T, line string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64)
				if _, err := c.Read(buf); err == nil && line != "" {
					c.Write([]byte(line))
				}
				c.Read(buf) // until the client hangs up
			}()
		}
	}()
	return l.Addr().String()
}

func TestPing(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t)
	if err := Ping(srv.Addr(), 2*time.Second, false); err != nil {
		t.Errorf("Ping of a running server: %v", err)
	}
	for _, tc := range []struct {
		name, addr, want string
	}{
		{"closed port", closedAddr(t), "refused"},
		{"loading", answeringAddr(t, "-LOADING Redis is loading the dataset in memory\r\n"), `PING answered "-LOADING`},
		{"silent", answeringAddr(t, ""), "no answer to PING"},
	} {
		err := Ping(tc.addr, 300*time.Millisecond, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Ping = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if err := Ping(answeringAddr(t, "-NOAUTH Authentication required.\r\n"), time.Second, false); err != nil {
		t.Errorf("Ping of a node that wants a password: %v; want it up", err)
	}
}

// Check tells an up that is gone from one still starting, and PINGs each node of a ready one.
func TestCheck(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t)
	up := fakeUp(t, `: > "$0.ready"; while :; do sleep 0.05; done`, filepath.Join(t.TempDir(), "up"))
	down := closedAddr(t)
	ready := State{Name: "r", Pid: up.Process.Pid, Description: &compose.Description{Nodes: []compose.Node{
		{Addr: srv.Addr(), Role: compose.RoleMaster}, {Addr: down, Role: compose.RoleReplica}}}}
	h := Check(ready, time.Second)
	if h.Phase != Ready || len(h.Nodes) != 2 || h.Nodes[0] != nil || h.Nodes[1] == nil || h.OK() {
		t.Errorf("Check with a node down = %+v; want ready, the first node ok, the second down, not OK", h)
	}
	ready.Description.Nodes = ready.Description.Nodes[:1]
	if h := Check(ready, time.Second); !h.OK() {
		t.Errorf("Check with every node up = %+v; want OK", h)
	}
	starting := State{Name: "s", Pid: up.Process.Pid}
	if h := Check(starting, time.Second); h.Phase != Starting || h.OK() {
		t.Errorf("Check of a starting up = %+v; want Starting, not OK", h)
	}
	dead := ready
	dead.Pid = exitedPid(t)
	if h := Check(dead, time.Second); h.Phase != Dead || h.OK() || h.Nodes != nil {
		t.Errorf("Check of a gone up = %+v; want Dead, not OK, no node pinged", h)
	}
}
