// Package buildversion names the build of a lockbench binary, for `lockbench version` and the
// version field of every result file, so that BASE and NEW files can be told apart by build.
package buildversion

import (
	"runtime/debug"
)

// Of returns the version a binary reports. set wins when a build gave one (-ldflags "-X
// main.version=…"; the lockbench image's build passes `git describe --always --dirty`). Else it
// is read from the Go build information: the module version of a `go install …@v1.2.3` build,
// or, for a build from a checkout (scripts/lockbench.sh, go build), the commit as git describe
// abbreviates it, with "-dirty" when the tree had uncommitted changes, e.g. "e971299-dirty".
// "dev" when there is neither (a test binary, a build with -buildvcs=false). It is safe for
// concurrent use.
func Of(set string) string {
	if set != "" {
		return set
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return fromBuildInfo(bi)
}

// fromBuildInfo is Of's reading of bi, apart so that tests can feed it.
func fromBuildInfo(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 7 {
		rev = rev[:7] // git describe --always's abbreviation, as the image's version has it
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
