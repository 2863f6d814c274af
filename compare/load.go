package compare

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/lockbench/lockbench/results"
)

// ErrBadInput is wrapped by every error that means the user gave something
// that cannot be compared: a missing or unreadable file, a file that is not
// a lockbench result of this schema, no runs, bad options, or two sides with
// no case in common. Check it with errors.Is.
var ErrBadInput = errors.New("bad input")

// inputError is an error that wraps ErrBadInput without repeating its text,
// so messages read "x.json: schema 2 …", not "bad input: x.json: …".
type inputError struct{ msg string }

func (e *inputError) Error() string        { return e.msg }
func (e *inputError) Is(target error) bool { return target == ErrBadInput }

func badInput(format string, a ...any) error { return &inputError{fmt.Sprintf(format, a...)} }

// Load reads the result files at path: the file itself, or every *.json file
// directly inside a directory (in name order), so that the results of
// several invocations pool into one sample. Every error wraps ErrBadInput.
// It is safe for concurrent use.
func Load(path string) ([]*results.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, badInput("%v", err)
	}
	paths := []string{path}
	if st.IsDir() {
		paths, err = filepath.Glob(filepath.Join(path, "*.json"))
		if err != nil {
			return nil, badInput("%v", err)
		}
		slices.Sort(paths)
		if len(paths) == 0 {
			return nil, badInput("%s: no *.json result files in the directory", path)
		}
	}
	var files []*results.File
	runs := 0
	for _, p := range paths {
		f, err := results.ReadFile(p)
		if err != nil {
			return nil, badInput("%v", err)
		}
		files = append(files, f)
		runs += len(f.Runs)
	}
	if runs == 0 {
		return nil, badInput("%s: no runs (every driver skipped, or nothing was measured)", path)
	}
	return files, nil
}

// Paths loads the result files of BASE and NEW (see Load) and compares them: what
// `lockbench compare BASE NEW` does. A load error says which side, "BASE: …" or "NEW: …".
// Every error wraps ErrBadInput. It is safe for concurrent use.
func Paths(basePath, newPath string, opts Options) (*Report, error) {
	base, err := Load(basePath)
	if err != nil {
		return nil, badInput("BASE: %v", err)
	}
	new, err := Load(newPath)
	if err != nil {
		return nil, badInput("NEW: %v", err)
	}
	return Compare(base, new, opts)
}
