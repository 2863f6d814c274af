package progress

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/workloads"
)

func sample() workloads.Progress {
	return workloads.Progress{Driver: "lockcore", Phase: "measure", Elapsed: 2 * time.Second, Planned: 10 * time.Second, Acquisitions: 3000}
}

// Off a terminal (a CI log), progress shows nothing and lines are plain lines.
func TestNotATerminal(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	u := New(&b)
	if u.tty {
		t.Fatal("a buffer taken for a terminal")
	}
	u.SetRound(2, 3)
	u.Progress(sample())
	u.Clear()
	u.Line("results: %s", "x.json")
	if got, want := b.String(), "results: x.json\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

// A file that is not a character device is not a terminal either.
func TestRegularFileIsNotATerminal(t *testing.T) {
	t.Parallel()
	f, err := os.Create(t.TempDir() + "/log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if New(f).tty {
		t.Error("a regular file taken for a terminal")
	}
}

// On a terminal the progress line updates in place; a log line clears it first, and Clear
// clears it once.
func TestTerminal(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	u := &UI{w: &b, tty: true}
	u.Progress(sample())
	want := clearLine + "lockcore measure    2s/10s  3000 acquisitions  1500/s"
	if got := b.String(); got != want {
		t.Fatalf("progress %q, want %q", got, want)
	}
	b.Reset()
	u.Line("done %d", 1)
	if got := b.String(); got != clearLine+"done 1\n" {
		t.Errorf("a line after progress: %q, want the progress cleared first", got)
	}
	b.Reset()
	u.Clear()
	u.Line("again")
	if got := b.String(); got != "again\n" {
		t.Errorf("a line with no progress shown: %q, want the line alone", got)
	}
	b.Reset()
	u.Progress(sample())
	u.Clear()
	u.Clear()
	if got := b.String(); strings.Count(got, clearLine) != 2 {
		t.Errorf("progress then two clears wrote %q: want one clear for the progress and one for Clear", got)
	}
}

// The round shows only when there are several; the prefix starts the line.
func TestRoundAndPrefix(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	u := &UI{w: &b, tty: true}
	u.SetRound(1, 1)
	u.Progress(sample())
	if strings.Contains(b.String(), "round") {
		t.Errorf("one round shown: %q", b.String())
	}
	b.Reset()
	u.SetRound(2, 5)
	u.SetPrefix(func() string { return "step 3/8" })
	u.Progress(sample())
	if got, want := b.String(), clearLine+"step 3/8  round 2/5 lockcore measure"; !strings.HasPrefix(got, want) {
		t.Errorf("progress %q, want it to start %q", got, want)
	}
	b.Reset()
	u.SetPrefix(nil)
	u.Progress(sample())
	if strings.Contains(b.String(), "step") {
		t.Errorf("prefix still shown after SetPrefix(nil): %q", b.String())
	}
}

// No progress figure divides by a zero elapsed time.
func TestZeroElapsed(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	u := &UI{w: &b, tty: true}
	p := sample()
	p.Elapsed, p.Acquisitions = 0, 0
	u.Progress(p)
	if got := b.String(); !strings.HasSuffix(got, " 0/s") {
		t.Errorf("progress at 0s: %q, want a rate of 0/s", got)
	}
}

// Lines from several goroutines (a session's runs and its fault schedule) come out whole.
func TestConcurrentLines(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	u := &UI{w: &b, tty: true}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				u.Progress(sample())
				u.SetRound(j, 50)
				u.Line("g%d line %d", i, j)
			}
		}()
	}
	wg.Wait()
	lines := 0
	for _, l := range strings.Split(b.String(), "\n") {
		if i := strings.LastIndex(l, clearLine); i >= 0 {
			l = l[i+len(clearLine):]
		}
		if strings.HasPrefix(l, "g") {
			lines++
			var g, n int
			if _, err := fmt.Sscanf(l, "g%d line %d", &g, &n); err != nil {
				t.Errorf("a torn line: %q", l)
			}
		}
	}
	if lines != 8*50 {
		t.Errorf("%d whole lines, want %d", lines, 8*50)
	}
}
