package buildversion

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go install at a tag", debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, "v1.3.0"},
		{"checkout, clean", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("e971299c0ffee1234567890abcdef0123456789a", "false")}, "e971299"},
		{"checkout, edited", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("e971299c0ffee1234567890abcdef0123456789a", "true")}, "e971299-dirty"},
		{"no vcs (-buildvcs=false, a test)", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
	} {
		if got := fromBuildInfo(&tc.bi); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := Of("v9"); got != "v9" {
		t.Errorf("Of with a version set at link time = %q, want it kept", got)
	}
}
