//go:build unix

package clitest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// SecretWatch finds the password that a lockbench run with --auth draws and writes to its
// secure dir under tmp (the run's TMPDIR), and keeps it: the run removes the dir when it ends,
// and the tests need the password to check that it appears nowhere.
type SecretWatch struct {
	stop chan struct{}
	done chan struct{}
	pw   string // set before done is closed
}

// WatchSecret polls tmp for the password file until the test ends or Password is called.
func WatchSecret(t *testing.T, tmp string) *SecretWatch {
	t.Helper()
	w := &SecretWatch{stop: make(chan struct{}), done: make(chan struct{})}
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

// Password returns the password the run used; it fails t if the run never wrote one.
func (w *SecretWatch) Password(t *testing.T) string {
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

// AssertSecretNowhere fails t when pw is in one of texts (name → text) or in a file under one
// of dirs.
func AssertSecretNowhere(t *testing.T, pw string, texts map[string]string, dirs ...string) {
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
