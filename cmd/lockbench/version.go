package main

import "github.com/lockbench/lockbench/internal/buildversion"

// version is set at build time with -ldflags "-X main.version=…" (the lockbench image's build
// does); otherwise it is read from the build information: the commit of the checkout it was
// built from, "-dirty" with uncommitted changes (see buildversion.Of).
var version string

func init() { version = buildversion.Of(version) }
