package report

import (
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
)

// chromium returns the path of a Chromium or Chrome binary. Outside CI the test skips when
// there is none; under CI (CI=true, where scripts/install-deps.sh installs Debian's chromium)
// a missing browser fails it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	switch os.Getenv("CI") {
	case "", "0", "false":
		t.Skip("no chromium on PATH; install it with scripts/install-deps.sh (Debian package chromium)")
	}
	t.Fatal("no chromium on PATH under CI: scripts/install-deps.sh installs it")
	return ""
}

// TestPageRendersInChromium renders the report page in a real browser, headless, and checks
// the screenshot: not blank, and with the first series' color in it, so the inline SVG charts
// were drawn, not just the text around them.
func TestPageRendersInChromium(t *testing.T) {
	browser := chromium(t)
	r, err := Build([]Source{roundTrip(t, repeatFile(t)), roundTrip(t, sweepFile(t, results.SweepSLO{Name: "p99", Percentile: 99, LimitUS: 2000}))}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := r.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "screenshot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--screenshot="+shot, "--window-size=1200,2000", "file://"+filepath.Join(dir, HTMLName))
	// Chromium starts helper processes; on a timeout the whole group goes, not just the parent.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, out)
	}
	fh, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, out)
	}
	defer fh.Close()
	img, err := png.Decode(fh)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	ink, _ := inkedPixels(img)
	if ink < b.Dx()*b.Dy()/50 {
		t.Errorf("screenshot %dx%d has %d non-white pixels: blank", b.Dx(), b.Dy(), ink)
	}
	// The first series' lines, in the charts' first color (antialiased at their edges).
	cr, cg, cb, _ := seriesColor(0).RGBA()
	near := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if diff(r>>8, cr>>8) < 40 && diff(g>>8, cg>>8) < 40 && diff(bl>>8, cb>>8) < 40 {
				near++
			}
		}
	}
	if near < 300 {
		t.Errorf("screenshot has %d pixels of the charts' first line color: the SVG charts did not render", near)
	}
}

func diff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}
