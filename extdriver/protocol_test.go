package extdriver_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/extdriver"
)

func TestParseReply(t *testing.T) {
	for _, c := range []struct {
		line    string
		want    extdriver.Reply
		garbage bool
	}{
		{line: "7 ok", want: extdriver.Reply{ID: 7, Status: "ok"}},
		{line: "8 timeout", want: extdriver.Reply{ID: 8, Status: "timeout"}},
		{line: "9 notowner w2 does not hold k", want: extdriver.Reply{ID: 9, Status: "notowner", Message: "w2 does not hold k"}},
		{line: "10 error READONLY You can't write", want: extdriver.Reply{ID: 10, Status: "error", Message: "READONLY You can't write"}},
		{line: "ok", garbage: true},
		{line: "-1 ok", garbage: true},
		{line: "3 granted", garbage: true},
		{line: "", garbage: true},
	} {
		got, err := extdriver.ParseReply(c.line)
		if c.garbage {
			if !errors.Is(err, extdriver.ErrGarbage) {
				t.Errorf("ParseReply(%q) = %+v, %v; want ErrGarbage", c.line, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseReply(%q) = %+v, %v; want %+v", c.line, got, err, c.want)
		}
	}
}

func TestParseHello(t *testing.T) {
	h, k, err := extdriver.ParseHello(`hello {"protocol":1,"library":"redis-py","version":"4.3.4","kinds":["mutex","reentrant"]}`)
	if err != nil || h.Library != "redis-py" || h.Version != "4.3.4" || k != drivers.KindMutex|drivers.KindReentrant {
		t.Fatalf("ParseHello = %+v, %v, %v", h, k, err)
	}
	h, _, err = extdriver.ParseHello(`hello {"protocol":1,"library":"x","kinds":["mutex"],"keys":["{name}:tokens","queue:{{name}}"]}`)
	if ds := h.Declared(); err != nil || len(ds) != 2 || ds[0].After != ":tokens" || ds[1].Before != "queue:{" {
		t.Fatalf("a hello with keys: %+v, %v: declared %+v", h, err, ds)
	}
	for line, want := range map[string]string{
		`{"protocol":1}`: "must be",
		`hello {"protocol":2,"library":"x","kinds":["mutex"]}`:        "protocol 2",
		`hello {"protocol":1,"kinds":["mutex"]}`:                      "no library",
		`hello {"protocol":1,"library":"x","kinds":["reentrant"]}`:    "lack mutex",
		`hello {"protocol":1,"library":"x","kinds":["mutex","fifo"]}`: `kind "fifo"`,
		`hello not json`: "hello:",
		`hello {"protocol":1,"library":"x","kinds":["mutex"],"keys":["*"]}`:                   `keys: keyspace: bad declared key pattern "*": no {name}`,
		`hello {"protocol":1,"library":"x","kinds":["mutex"],"keys":["{name}*"]}`:             "glob character",
		`hello {"protocol":1,"library":"x","kinds":["mutex"],"keys":["{name}"]}`:              "the lock name itself",
		`hello {"protocol":1,"library":"x","kinds":["mutex"],"keys":["{name}:a","{name}:a"]}`: "declared twice",
		`hello {"protocol":1,"library":"x","kinds":["mutex"],"keys":"{name}:a"}`:              "hello:",
	} {
		_, _, err := extdriver.ParseHello(line)
		if !errors.Is(err, extdriver.ErrGarbage) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseHello(%q) = %v; want ErrGarbage saying %q", line, err, want)
		}
	}
}

// FuzzParseReply: whatever an adapter writes, decoding it returns a reply or ErrGarbage, never
// panics, and a reply it accepts has a known status.
func FuzzParseReply(f *testing.F) {
	for _, s := range []string{"1 ok", "2 timeout", "3 notowner x", "4 error boom", "x", "99999999999999999999 ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		r, err := extdriver.ParseReply(line)
		if err != nil {
			if !errors.Is(err, extdriver.ErrGarbage) {
				t.Fatalf("ParseReply(%q): %v is not ErrGarbage", line, err)
			}
			return
		}
		switch r.Status {
		case "ok", "timeout", "notowner", "error":
		default:
			t.Fatalf("ParseReply(%q) accepted status %q", line, r.Status)
		}
	})
}

func TestParseSpec(t *testing.T) {
	for spec, want := range map[string][]string{
		"exec:redis-py=python3 adapters/redispy_lock.py":  {"python3", "adapters/redispy_lock.py"},
		"exec:x=prog --addr a:b,c  --q 'two words' \"d\"": {"prog", "--addr", "a:b,c", "--q", "two words", "d"},
	} {
		s, err := extdriver.ParseSpec(spec)
		if err != nil || strings.Join(s.Argv, "|") != strings.Join(want, "|") {
			t.Errorf("ParseSpec(%q) = %q, %v; want %q", spec, s.Argv, err, want)
		}
	}
	for _, bad := range []string{"exec:", "exec:=prog", "exec:x=", "exec:x y=prog", "exec:x=prog 'open", "exec:x=a\nb", "exec:prog"} {
		if _, err := extdriver.ParseSpec(bad); !errors.Is(err, drivers.ErrBadOption) {
			t.Errorf("ParseSpec(%q) = %v; want ErrBadOption", bad, err)
		}
	}
}

// TestDriversParse: --driver's parser hands exec: specs to this package whole, colons and
// commas in the command included.
func TestDriversParse(t *testing.T) {
	d, err := drivers.Parse("exec:x=prog --addr a:b,c")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.(*extdriver.Driver); !ok || d.Name() != "exec:x=prog --addr a:b,c" {
		t.Fatalf("drivers.Parse gave %T named %q", d, d.Name())
	}
	if _, err := drivers.Parse("exec:bad name=prog"); !errors.Is(err, drivers.ErrBadOption) {
		t.Fatalf("drivers.Parse of a bad exec spec: %v; want ErrBadOption", err)
	}
}

func TestNeedsReferee(t *testing.T) {
	for _, c := range []struct {
		specs []string
		want  bool
	}{
		{[]string{"lockcore", "redsync"}, false},
		{[]string{"lockcore", "exec:redis-py=python3 a.py"}, true},
		{nil, false},
		{[]string{"executor"}, false},
	} {
		if got := extdriver.NeedsReferee(c.specs); got != c.want {
			t.Errorf("NeedsReferee(%q) = %v, want %v", c.specs, got, c.want)
		}
	}
}

// FuzzParseHello: whatever an adapter's first line is, ParseHello accepts only a hello of
// protocol 1 that names a library and offers mutex, and never panics.
func FuzzParseHello(f *testing.F) {
	f.Add(`hello {"protocol":1,"library":"x","version":"1","kinds":["mutex","reentrant"]}`)
	f.Add(`hello {"protocol":1,"library":"x","kinds":["rw"]}`)
	f.Add(`hello []`)
	f.Add(`hello {"protocol":1,"library":"x","kinds":["mutex"],"keys":["{name}:t","q:{name}"]}`)
	f.Fuzz(func(t *testing.T, line string) {
		h, k, err := extdriver.ParseHello(line)
		if err != nil {
			if !errors.Is(err, extdriver.ErrGarbage) {
				t.Fatalf("ParseHello(%q): %v is not ErrGarbage", line, err)
			}
			return
		}
		if h.Protocol != extdriver.Protocol || strings.TrimSpace(h.Library) == "" || !k.Has(drivers.KindMutex) || len(h.Declared()) != len(h.Keys) {
			t.Fatalf("ParseHello(%q) accepted %+v, %v", line, h, k)
		}
	})
}
