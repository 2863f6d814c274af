package lockcore

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/redis/rueidis"
)

// testEnv is one private redis-server plus a plain rueidis client to inspect it.
type testEnv struct {
	addr string
	rdb  rueidis.Client
}

func newEnv(t testing.TB) *testEnv {
	t.Helper()
	srv := redistest.NewServer(t)
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr()}, DisableCache: true})
	if err != nil {
		t.Fatalf("inspection client: %v", err)
	}
	t.Cleanup(rdb.Close)
	return &testEnv{addr: srv.Addr(), rdb: rdb}
}

// client returns a lockcore Client on the env's server, closed when the test ends.
func (e *testEnv) client(t testing.TB, opt Options) *Client {
	t.Helper()
	opt.Redis.InitAddress = []string{e.addr}
	c, err := New(opt)
	if err != nil {
		t.Fatalf("lockcore.New: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func (e *testEnv) do(t testing.TB, args ...string) rueidis.RedisResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return e.rdb.Do(ctx, e.rdb.B().Arbitrary(args...).Build())
}

func (e *testEnv) int(t testing.TB, args ...string) int64 {
	t.Helper()
	n, err := e.do(t, args...).AsInt64()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return n
}

// calls returns the calls count of one command from INFO commandstats.
func (e *testEnv) calls(t testing.TB, cmd string) int64 {
	t.Helper()
	info, err := e.do(t, "INFO", "commandstats").ToString()
	if err != nil {
		t.Fatalf("INFO: %v", err)
	}
	prefix := "cmdstat_" + cmd + ":calls="
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
			n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
			return n
		}
	}
	return 0
}

// assertNoKeys fails if the server holds any key: every test leaves Redis clean.
func (e *testEnv) assertNoKeys(t testing.TB) {
	t.Helper()
	keys, err := e.do(t, "KEYS", "*").AsStrSlice()
	if err != nil {
		t.Fatalf("KEYS: %v", err)
	}
	if len(keys) != 0 {
		t.Errorf("keys left behind: %v", keys)
	}
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
