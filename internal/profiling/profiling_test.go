package profiling

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStartWritesBoth(t *testing.T) {
	dir := t.TempDir()
	cpu, tr := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "run.trace")
	stop, err := Start(cpu, tr)
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := range 1_000_000 {
		x += i % 7
	}
	_ = x
	stop()
	if b, err := os.ReadFile(cpu); err != nil || len(b) == 0 {
		t.Errorf("CPU profile: %d bytes, %v", len(b), err)
	}
	b, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	// Every Go execution trace starts with its version header, "go 1.NN trace".
	if !bytes.HasPrefix(b, []byte("go 1.")) {
		t.Errorf("trace file starts %q, want a Go execution trace header", b[:min(len(b), 16)])
	}
}

func TestStartNamesTheFlag(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "f")
	for _, c := range []struct{ cpu, trace, flag string }{
		{missing, "", "--cpuprofile"},
		{"", missing, "--trace"},
		{filepath.Join(t.TempDir(), "cpu.prof"), missing, "--trace"},
	} {
		stop, err := Start(c.cpu, c.trace)
		if err == nil {
			stop()
			t.Fatalf("Start(%q, %q) = nil error", c.cpu, c.trace)
		}
		if !strings.HasPrefix(err.Error(), c.flag+":") {
			t.Errorf("Start(%q, %q) = %v, want it to name %s", c.cpu, c.trace, err, c.flag)
		}
	}
	// A failed start leaves no profile running: another one can start.
	stop, err := Start(filepath.Join(t.TempDir(), "cpu.prof"), "")
	if err != nil {
		t.Fatalf("CPU profile after a failed start: %v", err)
	}
	stop()
}
