package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckLabel: what a result file's label may be.
func TestCheckLabel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		label string
		ok    bool
	}{
		{"BASE", true}, {"v1.2", true}, {"rc-2", true}, {"pr_481", true}, {"1.3+dirty", true},
		{strings.Repeat("a", MaxLabelLen), true},
		{"", false}, {strings.Repeat("a", MaxLabelLen+1), false},
		{"-x", false}, {".hidden", false}, {"a b", false}, {"a=b", false}, {"base/", false}, {"née", false},
	} {
		if err := CheckLabel(tc.label); (err == nil) != tc.ok {
			t.Errorf("CheckLabel(%q) = %v, want ok %v", tc.label, err, tc.ok)
		}
	}
}

// TestLabelInFile: a label goes into the file and comes back; a file without one (every file
// from before labels) has no "label" key and reads as before; a label a run could not have
// given is refused as a bad result.
func TestLabelInFile(t *testing.T) {
	t.Parallel()
	f := testFile(t)
	f.Label = "v1.3"
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if got.Label != "v1.3" {
		t.Errorf("round trip: label %q, want v1.3", got.Label)
	}

	f.Label = ""
	data, err = json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(`"label"`)) {
		t.Errorf("an unlabelled file has a label key: old readers would see a new field for nothing")
	}
	old, err := os.ReadFile(filepath.Join("..", "cmd", "lockbench", "testdata", "old-run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err = Decode(bytes.NewReader(old)); err != nil {
		t.Errorf("a file from before labels: %v", err)
	} else if got.Label != "" {
		t.Errorf("a file from before labels: label %q", got.Label)
	}

	bad := strings.Replace(string(data), `"tool":`, `"label":"a b","tool":`, 1)
	if _, err := Decode(strings.NewReader(bad)); !errors.Is(err, ErrBadResult) || !strings.Contains(err.Error(), `label "a b"`) {
		t.Errorf("label %q: err %v, want ErrBadResult naming it", "a b", err)
	}
}
