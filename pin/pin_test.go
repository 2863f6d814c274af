package pin

import (
	"errors"
	"os/exec"
	"runtime"
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]CPUs{
		"0":         {0},
		"1-3":       {1, 2, 3},
		"3,1,2-2":   {1, 2, 3},
		" 0 , 4-5 ": {0, 4, 5},
	} {
		got, err := Parse(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "a", "1-", "-1", "3-1", "0,,1", "1024", "1.5"} {
		if got, err := Parse(in); !errors.Is(err, ErrBadList) {
			t.Errorf("Parse(%q) = %v, %v; want ErrBadList", in, got, err)
		}
	}
}

func TestStringFoldsRanges(t *testing.T) {
	for _, c := range []struct {
		cpus CPUs
		want string
	}{{nil, ""}, {CPUs{0}, "0"}, {CPUs{0, 1, 2, 3, 6}, "0-3,6"}, {CPUs{1, 3, 4}, "1,3-4"}} {
		if got := c.cpus.String(); got != c.want {
			t.Errorf("%v.String() = %q, want %q", []int(c.cpus), got, c.want)
		}
		if c.want != "" {
			back, err := Parse(c.want)
			if err != nil || !slices.Equal(back, c.cpus) {
				t.Errorf("Parse(%q) = %v, %v; want %v", c.want, back, err, c.cpus)
			}
		}
	}
}

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		avail          CPUs
		masters        int
		server, client CPUs
		ok             bool
	}{
		{CPUs{0}, 1, nil, nil, false},
		{CPUs{0, 1}, 1, CPUs{1}, CPUs{0}, true},
		{CPUs{0, 1}, 3, CPUs{1}, CPUs{0}, true}, // never more than half
		{CPUs{0, 1, 2, 3, 4, 5, 6, 7}, 3, CPUs{5, 6, 7}, CPUs{0, 1, 2, 3, 4}, true},
		{CPUs{0, 1, 2, 3}, 0, CPUs{3}, CPUs{0, 1, 2}, true},
	} {
		s, cl, ok := Split(c.avail, c.masters)
		if ok != c.ok || !slices.Equal(s, c.server) || !slices.Equal(cl, c.client) {
			t.Errorf("Split(%v, %d) = %v, %v, %v; want %v, %v, %v", c.avail, c.masters, s, cl, ok, c.server, c.client, c.ok)
		}
		if len(s.Intersect(cl)) != 0 {
			t.Errorf("Split(%v, %d): server and client share %v", c.avail, c.masters, s.Intersect(cl))
		}
	}
}

func TestMissing(t *testing.T) {
	if got := (CPUs{0, 1, 7}).Missing(CPUs{0, 1, 2}); !slices.Equal(got, CPUs{7}) {
		t.Errorf("Missing = %v, want [7]", got)
	}
}

func TestSelfPlacesAndRestores(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU placement is Linux only")
	}
	before, err := Available()
	if err != nil {
		t.Fatal(err)
	}
	procs := runtime.GOMAXPROCS(0)
	one := before[len(before)-1:]
	restore, err := Self(one)
	if err != nil {
		t.Fatal(err)
	}
	now, err := Available()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(now, one) || runtime.GOMAXPROCS(0) != 1 {
		t.Errorf("after Self(%v): mask %v, GOMAXPROCS %d; want %v, 1", one, now, runtime.GOMAXPROCS(0), one)
	}
	// A process forked now inherits the mask.
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child, err := Of(cmd.Process.Pid)
	cmd.Process.Kill()
	cmd.Wait()
	if err != nil || !slices.Equal(child, one) {
		t.Errorf("forked child's mask %v, %v; want %v", child, err, one)
	}
	restore()
	if after, _ := Available(); !slices.Equal(after, before) || runtime.GOMAXPROCS(0) != procs {
		t.Errorf("after restore: mask %v, GOMAXPROCS %d; want %v, %d", after, runtime.GOMAXPROCS(0), before, procs)
	}
}

func TestStartPlacesOnlyTheChild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU placement is Linux only")
	}
	before, err := Available()
	if err != nil {
		t.Fatal(err)
	}
	one := before[:1]
	cmd := exec.Command("sleep", "5")
	if err := Start(one, cmd.Start); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if got, err := Of(cmd.Process.Pid); err != nil || !slices.Equal(got, one) {
		t.Errorf("child's mask %v, %v; want %v", got, err, one)
	}
	if now, _ := Available(); !slices.Equal(now, before) {
		t.Errorf("lockbench's own mask became %v, want %v kept", now, before)
	}
}
