// Package generatorstest holds what tests of the generators share: the lockbench image, built
// once per test binary. It is apart from compose/docker/dockertest because building the image
// needs package generators, which lockcore's Docker tests must not import (a cycle).
package generatorstest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/compose/docker/dockertest"
	"github.com/lockbench/lockbench/generators"
)

var (
	once sync.Once
	name string
	err  error
)

// Image calls dockertest.Require, then returns generators.LocalImage, the lockbench image,
// built from this checkout (or found up to date) once per test binary. The first build on a
// machine compiles lockbench from scratch (scripts/docker-check.sh does it before the tests).
func Image(t testing.TB) string {
	t.Helper()
	dockertest.Require(t)
	once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		var res docker.BuildResult
		res, err = generators.BuildImage(ctx, generators.BuildOptions{})
		name = res.Tag
	})
	if err != nil {
		t.Fatalf("building the lockbench image: %v", err)
	}
	return name
}
