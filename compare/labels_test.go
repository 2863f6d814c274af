package compare

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// labelled is f carrying label, as lockbench run --label writes it.
func labelled(f *results.File, label string) *results.File {
	f.Label = label
	return f
}

// TestLabelsShown: the labels the files carry (run --label) are in the report, its text and
// markdown, each once; unlabelled files print as before; a side that pools labels, or the same
// labels on both sides, is warned about.
func TestLabelsShown(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 22))
	text := func(rep *Report, format string) string {
		var b bytes.Buffer
		if err := rep.WriteFormat(&b, format); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}

	base := []*results.File{labelled(synthFile(rng, 6, 1, "lockcore"), "v1.2"), labelled(synthFile(rng, 6, 1, "lockcore"), "v1.2")}
	new := []*results.File{labelled(synthFile(rng, 6, 1, "lockcore"), "v1.3")}
	rep, err := Compare(base, new, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.BaseLabels, []string{"v1.2"}) || !slices.Equal(rep.NewLabels, []string{"v1.3"}) {
		t.Errorf("labels BASE %q NEW %q, want [v1.2] and [v1.3]", rep.BaseLabels, rep.NewLabels)
	}
	for _, format := range []string{"text", "markdown", "json"} {
		want := "labels: BASE v1.2, NEW v1.3"
		if format == "json" {
			want = `"base_labels": [`
		}
		if out := text(rep, format); !strings.Contains(out, want) {
			t.Errorf("%s output lacks %q:\n%s", format, want, out)
		}
	}
	for _, w := range rep.Warnings {
		if strings.Contains(w, "label") {
			t.Errorf("warning %q for one label a side, distinct", w)
		}
	}

	// Unlabelled: no line, no field, as before labels.
	plain, err := Compare([]*results.File{synthFile(rng, 6, 1, "lockcore")}, []*results.File{synthFile(rng, 6, 1, "lockcore")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out := text(plain, "text") + text(plain, "json"); strings.Contains(out, "labels") {
		t.Errorf("unlabelled files: output names labels:\n%s", out)
	}

	// NEW unlabelled, BASE pooling two labels; then the same label on both sides.
	mixed, err := Compare([]*results.File{labelled(synthFile(rng, 6, 1, "lockcore"), "v1.2"), labelled(synthFile(rng, 6, 1, "lockcore"), "v1.1")},
		[]*results.File{synthFile(rng, 6, 1, "lockcore")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out := text(mixed, "text"); !strings.Contains(out, "labels: BASE v1.2 + v1.1, NEW (no label)") ||
		!strings.Contains(out, "warning: BASE pools files of 2 labels (v1.2, v1.1) into one sample") {
		t.Errorf("BASE of two labels, NEW of none:\n%s", out)
	}
	same, err := Compare([]*results.File{labelled(synthFile(rng, 6, 1, "lockcore"), "v1.2")}, []*results.File{labelled(synthFile(rng, 6, 1, "lockcore"), "v1.2")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(same.Warnings, "BASE and NEW carry the same label v1.2: are these the files meant?") {
		t.Errorf("the same label on both sides: warnings %q", same.Warnings)
	}
}
