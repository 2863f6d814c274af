package generators

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/lockbench/lockbench/compose/docker"
)

// LocalImage is the tag BuildImage gives the lockbench image by default, and the image
// --generators docker runs unless told otherwise.
const LocalImage = "lockbench/lockbench:local"

// modulePath identifies a lockbench checkout: the module line of its go.mod.
const modulePath = "github.com/lockbench/lockbench"

// UID and GID the image runs as: a numeric USER, so that Kubernetes' runAsNonRoot can check it
// without an /etc/passwd lookup. 65532 is the conventional "nonroot" of distroless images.
const (
	UID = 65532
	GID = 65532
)

// imageConfig configures the image like the Dockerfile's final stage: the static binary as the
// entrypoint, a non-root user, and a writable working directory (/data, mode 1777) where a
// worker's default result directory goes.
var imageConfig = []string{
	"ENV PATH=/usr/local/bin",
	fmt.Sprintf("USER %d:%d", UID, GID),
	"WORKDIR /data",
	`ENTRYPOINT ["/usr/local/bin/lockbench"]`,
	`CMD ["version"]`,
}

// BuildOptions says what BuildImage builds. The zero value builds LocalImage from the checkout
// that contains the working directory.
type BuildOptions struct {
	// Tag names the image; empty means LocalImage.
	Tag string
	// Src is the checkout to build (the directory holding lockbench's go.mod); empty: the
	// working directory or the nearest parent that is one.
	Src string
	// Version is what 'lockbench version' prints in the image (-X main.version); empty:
	// "git describe --always --dirty" of Src, or "dev".
	Version string
	// Log, if set, receives the build's output; nil discards it.
	Log io.Writer
	// Force builds even when an image with the same tag and content exists.
	Force bool
}

// BuildImage builds the lockbench image from a checkout, the way the Dockerfile does but with
// no base image: it compiles a static binary (CGO_ENABLED=0, -trimpath) with the Go toolchain
// in PATH and imports it, with an /etc/passwd naming the non-root user, as a one-layer image
// (docker.ImportImage). Since the build is reproducible, building an unchanged checkout again
// does nothing. It needs a Docker engine (the error wraps docker.ErrNoDocker otherwise) and Go.
// It is safe for concurrent use.
func BuildImage(ctx context.Context, opts BuildOptions) (docker.BuildResult, error) {
	if opts.Tag == "" {
		opts.Tag = LocalImage
	}
	res := docker.BuildResult{Tag: opts.Tag}
	if err := docker.Available(ctx); err != nil {
		return res, err
	}
	src, err := findCheckout(opts.Src)
	if err != nil {
		return res, err
	}
	if opts.Version == "" {
		opts.Version = gitVersion(ctx, src)
	}
	bin, err := buildBinary(ctx, src, opts.Version, opts.Log)
	if err != nil {
		return res, err
	}
	files := []docker.ImageFile{
		{Path: "/usr/local/bin/lockbench", Mode: 0o755, Data: bin},
		// Only for tools that look a name up (ps, id); the image runs by the numeric USER.
		{Path: "/etc/passwd", Mode: 0o644, Data: fmt.Appendf(nil, "root:x:0:0:root:/root:/sbin/nologin\nlockbench:x:%d:%d:lockbench:/data:/sbin/nologin\n", UID, GID)},
		{Path: "/etc/group", Mode: 0o644, Data: fmt.Appendf(nil, "root:x:0:\nlockbench:x:%d:\n", GID)},
	}
	return docker.ImportImage(ctx, docker.BuildOptions{Tag: opts.Tag, Log: opts.Log, Force: opts.Force}, files, imageConfig)
}

// findCheckout returns dir, or the working directory or its nearest parent, holding the go.mod
// of lockbench.
func findCheckout(dir string) (string, error) {
	if dir != "" {
		if !isCheckout(dir) {
			return "", fmt.Errorf("%s is not a lockbench checkout (no go.mod of %s)", dir, modulePath)
		}
		return filepath.Abs(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if isCheckout(d) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no lockbench checkout at or above %s: run from the source tree or give --src", wd)
		}
	}
}

func isCheckout(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	return err == nil && bytes.HasPrefix(bytes.TrimSpace(data), []byte("module "+modulePath+"\n"))
}

// gitVersion names the checkout's commit, as a release build would, or "dev".
func gitVersion(ctx context.Context, src string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", src, "describe", "--always", "--dirty").Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		return "dev"
	}
	return strings.TrimSpace(string(out))
}

// buildBinary compiles cmd/lockbench of src as a static Linux binary for the engine's
// architecture (this machine's: the engine is local) and returns it.
func buildBinary(ctx context.Context, src, version string, log io.Writer) ([]byte, error) {
	if _, err := exec.LookPath("go"); err != nil {
		return nil, errors.New("the Go toolchain (go) is not in PATH: it builds the lockbench binary for the image")
	}
	dir, err := os.MkdirTemp("", "lockbench-image-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "lockbench")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -X main.version="+version, "-o", out, "./cmd/lockbench")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if log != nil {
		cmd.Stderr = io.MultiWriter(&stderr, log)
	}
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build ./cmd/lockbench in %s: %w: %s", src, err, strings.TrimSpace(stderr.String()))
	}
	return os.ReadFile(out)
}

// CheckImage returns nil when a Docker engine answers and has image; else an error wrapping
// docker.ErrNoDocker or ErrNoImage that says what to do. It is safe for concurrent use.
func CheckImage(ctx context.Context, image string) error {
	cli, err := newClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	if _, err := cli.ImageInspect(ctx, image); err != nil {
		if cerrdefs.IsNotFound(err) {
			return fmt.Errorf("%w: %s (build it from this checkout with 'lockbench image build lockbench')", ErrNoImage, image)
		}
		return fmt.Errorf("inspect %s: %w", image, err)
	}
	return nil
}
