package docker

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// LocalImage is the tag BuildImage gives the image it builds from this machine's Redis: what
// tests use, since machines without an image registry cannot pull DefaultImage.
const LocalImage = "lockbench/redis:local"

// ContentLabel is the image label holding the hash of everything BuildImage put in the image;
// an image whose label matches is not built again.
const ContentLabel = "lockbench.image.content"

// buildTimeout bounds one image build; copying a few MB into a FROM scratch image takes
// seconds.
const buildTimeout = 5 * time.Minute

// imageBinaries are the programs the local image carries, looked up in PATH by name and
// installed at these paths: the server (also the sentinel, as redis-server --sentinel),
// redis-cli for cluster creation and health checks, and the little shell the compose files
// use (sh -c, and CMD-SHELL health checks, which run /bin/sh; sleep infinity; grep -q).
var imageBinaries = []string{"/usr/bin/redis-server", "/usr/bin/redis-cli", "/bin/sh", "/usr/bin/sleep", "/usr/bin/grep"}

// entrypointShim stands in for the official image's docker-entrypoint.sh, which the compose
// files call: it runs its arguments, and, like the original, prepends redis-server to
// arguments that start with a dash.
const entrypointShim = `#!/bin/sh
case "$1" in -*) set -- redis-server "$@" ;; esac
exec "$@"
`

// BuildOptions says what BuildImage builds. The zero value builds LocalImage from the
// redis-server found in PATH.
type BuildOptions struct {
	// Tag names the image; empty means LocalImage.
	Tag string
	// Log, if set, receives the builder's output; nil discards it.
	Log io.Writer
	// Force builds even when an image with the same tag and content exists.
	Force bool
}

// BuildResult says what BuildImage did.
type BuildResult struct {
	Tag     string // the image's tag
	ID      string // the image id
	Content string // the content hash, also the image's ContentLabel
	Built   bool   // false when an image with the same content already existed
}

// BuildImage builds a small Redis image (from scratch, imported as one layer) from this
// machine's redis-server, redis-cli, a shell and the shared libraries they link, so that the
// docker provider and the compose files run where no image can be pulled. It is idempotent:
// when an image of that tag carries the same ContentLabel, nothing is built. The image has no package manager
// and runs as root; it is for tests and benchmarks on this machine, not for production.
// BuildImage needs Linux binaries of the engine's architecture (a local Linux engine). It is
// safe for concurrent use, also across processes of this machine (a lock file serialises
// builds).
func BuildImage(ctx context.Context, opts BuildOptions) (BuildResult, error) {
	if opts.Tag == "" {
		opts.Tag = LocalImage
	}
	if err := Available(ctx); err != nil {
		return BuildResult{Tag: opts.Tag}, err
	}
	files, err := collectImageFiles()
	if err != nil {
		return BuildResult{Tag: opts.Tag}, fmt.Errorf("docker: build %s: %w", opts.Tag, err)
	}
	return ImportImage(ctx, opts, files, imageConfig)
}

// ImageFile is one file of an image ImportImage builds: its absolute path inside the image,
// its mode and its content. It is a plain value.
type ImageFile struct {
	Path string
	Mode int64
	Data []byte
}

// ImportImage builds opts.Tag from nothing (like FROM scratch) as one layer holding files and
// the directories /data and /tmp (mode 1777), configured by config (Dockerfile instructions
// such as ENV, USER, WORKDIR, ENTRYPOINT, CMD) and labelled with ContentLabel, a hash of config
// and files. When an image of that tag already carries the same hash, nothing is built (unless
// opts.Force); the image the tag named before is removed. It is safe for concurrent use, also
// across processes of this machine (a lock file serialises builds).
func ImportImage(ctx context.Context, opts BuildOptions, files []ImageFile, config []string) (BuildResult, error) {
	if opts.Tag == "" {
		return BuildResult{}, errors.New("docker: ImportImage needs a tag")
	}
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b ImageFile) int { return strings.Compare(a.Path, b.Path) })
	res := BuildResult{Tag: opts.Tag, Content: contentHash(config, files)}

	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	// Test binaries of several packages start at once and each wants the image: one builds,
	// the others then find it up to date, instead of racing to tag and leaving the loser's
	// image dangling.
	unlock, err := lockBuild()
	if err != nil {
		return res, fmt.Errorf("docker: build %s: %w", opts.Tag, err)
	}
	defer unlock()
	cli, err := newClient(ctx)
	if err != nil {
		return res, err
	}
	defer cli.Close()
	old, err := cli.ImageInspect(ctx, opts.Tag)
	switch {
	case err == nil && old.Config != nil && old.Config.Labels[ContentLabel] == res.Content && !opts.Force:
		res.ID = old.ID
		return res, nil
	case err != nil && !cerrdefs.IsNotFound(err):
		return res, fmt.Errorf("docker: inspect %s: %w", opts.Tag, err)
	}

	// An import of one root file system tar, rather than a Dockerfile build: one layer, no
	// intermediate images, and no builder (legacy or BuildKit) needed.
	tarball, err := rootfsTar(files)
	if err != nil {
		return res, fmt.Errorf("docker: build %s: %w", opts.Tag, err)
	}
	changes := append(slices.Clone(config), "LABEL "+ContentLabel+"="+res.Content)
	out, err := cli.ImageImport(ctx, client.ImageImportSource{Source: tarball, SourceName: "-"}, opts.Tag,
		client.ImageImportOptions{Message: "lockbench image build", Changes: changes})
	if err != nil {
		return res, fmt.Errorf("docker: build %s: %w", opts.Tag, err)
	}
	err = readBuildOutput(out, opts.Log)
	out.Close()
	if err != nil {
		return res, fmt.Errorf("docker: build %s: %w", opts.Tag, err)
	}
	img, err := cli.ImageInspect(ctx, opts.Tag)
	if err != nil {
		return res, fmt.Errorf("docker: inspect %s after the build: %w", opts.Tag, err)
	}
	res.ID, res.Built = img.ID, true
	// The image the tag named before is now untagged; remove it unless a container uses it,
	// so rebuilding after a Redis upgrade leaves no dangling image behind.
	if old.ID != "" && old.ID != img.ID {
		cli.ImageRemove(ctx, old.ID, client.ImageRemoveOptions{PruneChildren: true})
	}
	return res, nil
}

// collectImageFiles reads the binaries, every library ldd says they load (the dynamic loader
// included), each stored under the path the loader looks for and with its content resolved
// through symlinks, and the entrypoint shim.
func collectImageFiles() ([]ImageFile, error) {
	byPath := map[string]ImageFile{}
	add := func(inImage, onHost string, mode int64) error {
		if _, ok := byPath[inImage]; ok {
			return nil
		}
		data, err := os.ReadFile(onHost)
		if err != nil {
			return err
		}
		byPath[inImage] = ImageFile{Path: inImage, Mode: mode, Data: data}
		return nil
	}
	for _, inImage := range imageBinaries {
		name := path.Base(inImage)
		p, err := exec.LookPath(name)
		if err != nil {
			if name == "redis-server" || name == "redis-cli" {
				return nil, fmt.Errorf("%s not found in PATH: install Redis (Debian: apt-get install redis-server) to build the local image", name)
			}
			return nil, err
		}
		// Installed under its own name: Debian's redis-server is a symlink to
		// redis-check-rdb, and Redis picks its mode from the name it runs as.
		if err := add(inImage, p, 0o755); err != nil {
			return nil, err
		}
		libs, err := sharedLibraries(p)
		if err != nil {
			return nil, err
		}
		for _, l := range libs {
			if err := add(l, l, 0o755); err != nil {
				return nil, err
			}
		}
	}
	byPath["/usr/local/bin/docker-entrypoint.sh"] = ImageFile{Path: "/usr/local/bin/docker-entrypoint.sh", Mode: 0o755, Data: []byte(entrypointShim)}
	files := make([]ImageFile, 0, len(byPath))
	for _, f := range byPath {
		files = append(files, f)
	}
	return files, nil
}

// sharedLibraries returns the absolute paths ldd reports for bin: its libraries and the
// dynamic loader. A static binary has none.
func sharedLibraries(bin string) ([]string, error) {
	out, err := exec.Command("ldd", bin).Output()
	if err != nil {
		if strings.Contains(string(out), "not a dynamic executable") {
			return nil, nil
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) && strings.Contains(string(ee.Stderr), "not a dynamic executable") {
			return nil, nil
		}
		return nil, fmt.Errorf("ldd %s: %w", bin, err)
	}
	var libs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		// "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)" or "/lib64/ld-linux-x86-64.so.2 (0x…)"
		for _, f := range strings.Fields(sc.Text()) {
			if filepath.IsAbs(f) {
				libs = append(libs, f)
				break
			}
		}
	}
	return libs, nil
}

// imageConfig is the image's configuration, applied at import as Dockerfile instructions.
// LD_LIBRARY_PATH spares the loader an ld.so.cache, which the image does not have.
var imageConfig = []string{
	"ENV PATH=/usr/local/bin:/usr/bin:/bin",
	"ENV LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/lib:/usr/lib",
	"WORKDIR /data",
	`CMD ["redis-server"]`,
}

// contentHash identifies an image's content: its configuration and every file's path, mode
// and bytes, files sorted by path.
func contentHash(config []string, files []ImageFile) string {
	h := sha256.New()
	for _, c := range config {
		fmt.Fprintf(h, "%s\n", c)
	}
	for _, f := range files {
		fmt.Fprintf(h, "\x00%s\x00%o\x00%d\x00", f.Path, f.Mode, len(f.Data))
		h.Write(f.Data)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// rootfsTar returns the image's root file system as a tar: the files and the empty
// directories the image needs (/data for the nodes' files, /tmp).
func rootfsTar(files []ImageFile) (io.Reader, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	write := func(h *tar.Header, data []byte) error {
		h.ModTime = epoch
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, dir := range []string{"data/", "tmp/"} {
		if err := write(&tar.Header{Name: dir, Typeflag: tar.TypeDir, Mode: 0o1777}, nil); err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		h := &tar.Header{Name: strings.TrimPrefix(f.Path, "/"), Mode: f.Mode, Size: int64(len(f.Data))}
		if err := write(h, f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return &buf, nil
}

// readBuildOutput copies the engine's progress lines to log and returns the error the stream
// reports, if any: the HTTP status is 200 even when the import fails.
func readBuildOutput(r io.Reader, log io.Writer) error {
	dec := json.NewDecoder(r)
	for {
		var m struct {
			Stream string `json:"stream"`
			Status string `json:"status"`
			Error  string `json:"error"`
		}
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading the build output: %w", err)
		}
		if m.Error != "" {
			return errors.New(strings.TrimSpace(m.Error))
		}
		if log != nil && m.Stream+m.Status != "" {
			io.WriteString(log, strings.TrimRight(m.Stream+m.Status, "\n")+"\n")
		}
	}
}
