package results

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadRunFiles reads every file or none, refusing a file with no runs; Export refuses a file
// whose runs measured nothing, and exports one that did.
func TestReadRunFilesAndExport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty, err := WriteFile(filepath.Join(dir, "empty"), NewFile("test", nil))
	if err != nil {
		t.Fatal(err)
	}
	nothing := NewFile("test", nil)
	nothing.Runs = []Run{{Driver: "skipped"}}
	nothingPath, err := WriteFile(filepath.Join(dir, "nothing"), nothing)
	if err != nil {
		t.Fatal(err)
	}
	measured := NewFile("test", nil)
	measured.Runs = []Run{timelineRun(t)}
	measuredPath, err := WriteFile(filepath.Join(dir, "measured"), measured)
	if err != nil {
		t.Fatal(err)
	}
	notJSON := filepath.Join(dir, "notjson.json")
	if err := os.WriteFile(notJSON, []byte("lockbench was here\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	if _, err := ReadRunFiles([]string{measuredPath, empty}); !errors.Is(err, ErrNoRuns) || err.Error() != empty+": no runs" {
		t.Errorf("ReadRunFiles with a file of no runs: %v; want ErrNoRuns after its path", err)
	}
	if _, err := ReadRunFiles([]string{measuredPath, notJSON}); !errors.Is(err, ErrBadResult) {
		t.Errorf("ReadRunFiles with a file that is not a result: %v; want ErrBadResult", err)
	}
	if _, err := ReadRunFiles([]string{filepath.Join(dir, "missing.json")}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadRunFiles of a missing file: %v; want os.ErrNotExist", err)
	}
	files, err := ReadRunFiles([]string{measuredPath, nothingPath})
	if err != nil || len(files) != 2 {
		t.Fatalf("ReadRunFiles = %d files, %v", len(files), err)
	}

	out := t.TempDir()
	written, err := Export(nothingPath, out, files[1])
	if want := nothingPath + ": no run measured anything: nothing to export"; !errors.Is(err, ErrNothingToExport) || err.Error() != want || len(written) != 0 {
		t.Errorf("Export of a file that measured nothing = %v, %v; want %q", written, err, want)
	}
	written, err = Export(measuredPath, out, files[0])
	if err != nil || len(written) != 1 || !strings.HasPrefix(written[0].Hgrm, out) || written[0].IntervalLog == "" {
		t.Errorf("Export of a measured file = %+v, %v; want its .hgrm and .hlog in %s", written, err, out)
	}
}
