package bench

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDefaultOutIsNotSource: the directory results go to by default, taken from the
// repository's root (where scripts/lib.sh runs lockbench, and where a newcomer stands), holds no
// Go source and is ignored by git, so a run started there writes nothing into a package.
func TestDefaultOutIsNotSource(t *testing.T) {
	t.Parallel()
	if filepath.IsAbs(DefaultOut) || filepath.Clean(DefaultOut) != DefaultOut || strings.ContainsRune(DefaultOut, filepath.Separator) {
		t.Fatalf("DefaultOut %q: want one relative path element, resolved from the working directory", DefaultOut)
	}
	root := filepath.Join("..")
	dir := filepath.Join(root, DefaultOut)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			t.Errorf("%s: DefaultOut %q is a directory of Go source", path, DefaultOut)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	ignore, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Split(string(ignore), "\n"), "/"+DefaultOut+"/") {
		t.Errorf(".gitignore has no line /%s/: result files would show up in git status", DefaultOut)
	}
}
