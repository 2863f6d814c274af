package results

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCheckDir(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	// A directory that does not exist yet is made, and left empty.
	dir := filepath.Join(base, "a", "b")
	if err := CheckDir(dir); err != nil {
		t.Fatalf("CheckDir(%s): %v", dir, err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("%s after the check: %v, %v; want it made and empty", dir, entries, err)
	}
	// A file where the directory should be cannot hold results, nor can a path below it.
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{file, filepath.Join(file, "sub")} {
		if err := CheckDir(d); err == nil {
			t.Errorf("CheckDir(%s): no error; want one (%s is a file)", d, file)
		}
	}
}
