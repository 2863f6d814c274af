package crosscheck

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// childEnv makes the test binary act as a second process that maps the arena named in it.
const childEnv = "CROSSCHECK_TEST_ARENA"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		a, err := Open(path, 10)
		if err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(3)
		}
		// Enter key 3 and leave a holder there, as a process would mid-hold; count a violation.
		a.Shared().Occupancy[3].Add(1)
		a.Shared().Tokens[9].Store(42)
		a.Shared().Violations.Add(1)
		a.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestAnotherProcessSeesTheState(t *testing.T) {
	a, err := Create(t.TempDir(), 10)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Remove()
	a.Shared().Occupancy[3].Add(1) // this process holds key 3
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+a.Path())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	if got := a.Shared().Occupancy[3].Load(); got != 2 {
		t.Errorf("holders of key 3 = %d, want 2 (one per process)", got)
	}
	if got := a.Shared().Tokens[9].Load(); got != 42 {
		t.Errorf("last token of key 9 = %d, want the child's 42", got)
	}
	if got := a.Violations(); got != 1 {
		t.Errorf("violations = %d, want the child's 1", got)
	}
}

func TestTwoMappingsShareOneFile(t *testing.T) {
	a, err := Create(t.TempDir(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Remove()
	b, err := Open(a.Path(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.Shared().RW[999].Add(1 << 32)
	if got := a.Shared().RW[999].Load(); got != 1<<32 {
		t.Errorf("rw state of the last key through the other mapping = %d", got)
	}
}

func TestOpenRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	a, err := Create(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Remove()
	if _, err := Open(a.Path(), 11); !errors.Is(err, ErrBadArena) {
		t.Errorf("Open with another key count: %v, want ErrBadArena", err)
	}
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, make([]byte, size(10)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(other, 10); !errors.Is(err, ErrBadArena) {
		t.Errorf("Open of a file without the magic: %v, want ErrBadArena", err)
	}
	if _, err := Open(filepath.Join(dir, "missing"), 10); err == nil {
		t.Error("Open of a missing file succeeded")
	}
	for _, k := range []int{0, -1, MaxKeys + 1} {
		if _, err := Create(dir, k); err == nil {
			t.Errorf("Create with %s keys succeeded", strconv.Itoa(k))
		}
	}
}
