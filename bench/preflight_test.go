package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// The preflight of a server lockbench started: its header, one line for its one node, every node
// answered.
func TestPreflight(t *testing.T) {
	t.Parallel()
	tg := openSingle(t)
	var out bytes.Buffer
	complete, err := Preflight(t.Context(), tg, "lockbench:", 8, &out)
	if err != nil || !complete {
		t.Fatalf("Preflight = %v, %v; want every node, no error\n%s", complete, err, out.String())
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	if !strings.HasPrefix(first, "single deployment at ") || !strings.HasSuffix(first, ", 1 data nodes") {
		t.Errorf("first line %q; want the topology, its address and its 1 data node", first)
	}
	if !strings.Contains(out.String(), tg.Nodes()[0].Addr) {
		t.Errorf("no line for the node %s:\n%s", tg.Nodes()[0].Addr, out.String())
	}
}

// A w that cannot be written is an error, and not a bad spec: the deployment is fine.
func TestPreflightWriteFails(t *testing.T) {
	t.Parallel()
	tg := openSingle(t)
	if _, err := Preflight(t.Context(), tg, "lockbench:", 8, failWriter{}); err == nil || errors.Is(err, ErrBadSpec) {
		t.Errorf("Preflight to a failing writer: %v; want its error, not ErrBadSpec", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
