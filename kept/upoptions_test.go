package kept

import (
	"errors"
	"slices"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/target"
)

// UpFlags.Options defaults a sentinel's master name and refuses what up cannot start, naming
// the flag.
func TestUpFlagsOptions(t *testing.T) {
	t.Parallel()
	given := func(names ...string) func(string) bool {
		return func(n string) bool { return slices.Contains(names, n) }
	}
	ok := UpFlags{Topology: "sentinel", Provider: target.ProviderNative, Name: "a", Dir: t.TempDir(), Given: given()}
	o, err := ok.Options()
	if err != nil || o.Topology.Kind != compose.KindSentinel || o.Topology.MasterName != compose.DefaultMasterName || o.Name != "a" {
		t.Errorf("Options = %+v, %v; want a sentinel topology named a with the default master name", o, err)
	}
	for _, tc := range []struct {
		change func(*UpFlags)
		want   string
	}{
		{func(f *UpFlags) { f.Topology = "ring" }, "--topology: "},
		{func(f *UpFlags) { f.Topology, f.MasterName, f.Given = "single", "m", given("master-name") }, "--master-name is for --topology sentinel, not single"},
		{func(f *UpFlags) { f.MasterName, f.Given = "a b", given("master-name") }, `--master-name "a b": want a name without spaces`},
		{func(f *UpFlags) { f.Provider = "ssh" }, `--provider "ssh": want native or docker`},
		{func(f *UpFlags) { f.Image, f.Given = "x", given("image") }, "--image is for --provider docker"},
		{func(f *UpFlags) { f.Name = "../x" }, "--name "},
		{func(f *UpFlags) { f.Dir = "" }, "--state-dir must not be empty"},
	} {
		f := ok
		tc.change(&f)
		if _, err := f.Options(); !errors.Is(err, ErrBadOptions) || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want {
			t.Errorf("%+v: %v; want ErrBadOptions, %q", f, err, tc.want)
		}
	}
}
