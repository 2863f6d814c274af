package results

import "os"

// CheckDir creates dir if needed and makes sure a file can be written in it, leaving nothing
// behind, so that a command finds out that it could not write its result file before it
// spends minutes measuring (WriteFile would say so only after). It is safe for concurrent use.
func CheckDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".lockbench-check-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}
