package testparallel

import (
	"flag"
	"testing"
)

// TestDefaultKeepsAnExplicitValue checks both branches on the real flag: go test passed no
// -parallel to this binary unless asked, so the value after Default is either n or what the
// command line said.
func TestDefaultKeepsAnExplicitValue(t *testing.T) {
	f := flag.Lookup("test.parallel")
	if f == nil {
		t.Fatal("no test.parallel flag in a test binary")
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	before := f.Value.String()
	Default(7)
	switch got := f.Value.String(); {
	case given && got != before:
		t.Fatalf("-test.parallel=%s given, Default(7) changed it to %s", before, got)
	case !given && got != "7":
		t.Fatalf("no -test.parallel given, Default(7) left %s", got)
	}
	// Given now (Set counts as given for flag.Visit): a second call must not override it.
	Default(3)
	if got := f.Value.String(); got == "3" {
		t.Fatal("Default overrode a value already set")
	}
}
