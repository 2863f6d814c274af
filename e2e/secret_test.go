//go:build unix

package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// secretWatch finds the password that a lockbench run with --auth draws and writes to its
// secure dir under tmp (the run's TMPDIR), and keeps it: the run removes the dir when it ends,
// and the tests need the password to check that it appears nowhere.
type secretWatch struct {
	stop chan struct{}
	done chan struct{}
	pw   string // set before done is closed
}

// watchSecret polls tmp for the password file until the test ends or password is called.
func watchSecret(t *testing.T, tmp string) *secretWatch {
	t.Helper()
	w := &secretWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			paths, _ := filepath.Glob(filepath.Join(tmp, "lockbench-secure-*", "password"))
			for _, p := range paths {
				// Whole: newSecureStart writes the password and its line end at once.
				if b, err := os.ReadFile(p); err == nil && strings.HasSuffix(string(b), "\n") && len(b) > 1 {
					w.pw = strings.TrimSpace(string(b))
					return
				}
			}
			select {
			case <-w.stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(w.stop) }); <-w.done })
	return w
}

// password returns the password the run used; it fails t if the run never wrote one.
func (w *secretWatch) password(t *testing.T) string {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the run wrote no password file in its TMPDIR")
	}
	if w.pw == "" {
		t.Fatal("the run wrote no password file in its TMPDIR")
	}
	return w.pw
}

// assertSecretNowhere fails t when pw is in one of texts (name → text) or in a file under one
// of dirs.
func assertSecretNowhere(t *testing.T, pw string, texts map[string]string, dirs ...string) {
	t.Helper()
	if len(pw) < 8 {
		t.Fatalf("password %d bytes long: too short to search for", len(pw))
	}
	for name, text := range texts {
		if strings.Contains(text, pw) {
			t.Errorf("the password is in %s", name)
		}
	}
	files := 0
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			if strings.Contains(string(b), pw) {
				t.Errorf("the password is in %s", path)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}
	if len(dirs) > 0 && files == 0 {
		t.Errorf("no file in %v to search: the run wrote nothing", dirs)
	}
}
