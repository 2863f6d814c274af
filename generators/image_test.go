package generators_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/compose/docker/dockertest"
	"github.com/lockbench/lockbench/generators"
	"github.com/lockbench/lockbench/generators/generatorstest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := dockertest.Leftovers(); err != nil && code == 0 {
		os.Stderr.WriteString(err.Error() + "\n")
		code = 1
	}
	os.Exit(code)
}

// The image built from this checkout runs 'lockbench version' as its non-root user, from its
// entrypoint, and building it again changes nothing.
func TestImageRunsVersion(t *testing.T) {
	image := generatorstest.Image(t)
	if _, err := exec.LookPath("docker"); err != nil {
		if dockertest.InCI() {
			t.Fatal("CI is set but the docker CLI is not installed")
		}
		t.Skip("skipping: needs the docker CLI")
	}
	ctx := context.Background()
	out, err := exec.CommandContext(ctx, "docker", "run", "--rm",
		"--label", docker.LabelOwner+"=1", "--label", docker.LabelPID+"="+strconv.Itoa(os.Getpid()),
		image, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "lockbench ") {
		t.Fatalf("docker run %s version: %v: %q", image, err, out)
	}
	cfg, err := exec.CommandContext(ctx, "docker", "image", "inspect", "--format", "{{.Config.User}} {{json .Config.Entrypoint}}", image).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strconv.Itoa(generators.UID) + ":" + strconv.Itoa(generators.GID) + ` ["/usr/local/bin/lockbench"]`
	if got := strings.TrimSpace(string(cfg)); got != want {
		t.Errorf("image config %q, want %q", got, want)
	}
	res, err := generators.BuildImage(ctx, generators.BuildOptions{})
	if err != nil || res.Built {
		t.Errorf("building an unchanged checkout again: built %v, error %v; want nothing built", res.Built, err)
	}
}
