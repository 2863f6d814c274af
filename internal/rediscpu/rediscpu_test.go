package rediscpu

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRead parses each RESP2 reply kind, nested arrays and nils included.
func TestRead(t *testing.T) {
	in := "+OK\r\n-ERR no\r\n:42\r\n$3\r\nabc\r\n$-1\r\n*-1\r\n*3\r\n$-1\r\n:1\r\n*1\r\n-E x\r\n"
	c := &Conn{r: bufio.NewReader(strings.NewReader(in))}
	want := []any{"OK", RedisError("ERR no"), int64(42), "abc", nil, nil, []any{nil, int64(1), []any{RedisError("E x")}}}
	for i, w := range want {
		got, err := c.Read()
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("reply %d = %#v, want %#v", i, got, w)
		}
	}
	if err := replyError(want[6]); err == nil || err.Error() != "E x" {
		t.Errorf("replyError found %v in a nested array, want E x", err)
	}
	if _, err := c.Read(); err == nil {
		t.Error("Read past the end returned no error")
	}
	bad := &Conn{r: bufio.NewReader(strings.NewReader("?what\r\n"))}
	if _, err := bad.Read(); err == nil {
		t.Error("an unknown reply kind parsed")
	}
}

// TestReadDump reads the total and the description of a callgrind dump.
func TestReadDump(t *testing.T) {
	p := filepath.Join(t.TempDir(), "callgrind.out.3")
	dump := "version: 1\ndesc: Trigger: Client Request: m7\nevents: Ir\nfn=(1) main\n5 100\nsummary: 123456\ntotals: 123456\n"
	if err := os.WriteFile(p, []byte(dump), 0o644); err != nil {
		t.Fatal(err)
	}
	ir, desc, err := readDump(p)
	if err != nil || ir != 123456 || desc != "m7" {
		t.Errorf("readDump = %v, %q, %v; want 123456, m7, nil", ir, desc, err)
	}
	if err := os.WriteFile(p, []byte("desc: Trigger: Client Request: m1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readDump(p); err == nil {
		t.Error("a dump without totals read without error")
	}
}
