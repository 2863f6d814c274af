package conn

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadPasswordFile(t *testing.T) {
	t.Parallel()
	const typed = "Typed-the-Password-7c1"
	_, err := ReadPasswordFile("--password-file", typed)
	if !errors.Is(err, ErrBadInput) || strings.Contains(err.Error(), typed) || !strings.Contains(err.Error(), "--password-file cannot be read: no such file") {
		t.Errorf("ReadPasswordFile of a missing file: %v; want ErrBadInput naming the flag, not the argument", err)
	}
	dir := t.TempDir()
	empty, good := filepath.Join(dir, "empty"), filepath.Join(dir, "good")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(good, []byte("s3cret\r\nsecond line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPasswordFile("--password-file", empty); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "is empty: its first line must be the password") {
		t.Errorf("ReadPasswordFile of an empty file: %v", err)
	}
	if pw, err := ReadPasswordFile("--password-file", good); err != nil || pw != "s3cret" {
		t.Errorf("ReadPasswordFile = %q, %v; want the first line without its line end", pw, err)
	}
}
