package report

import (
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compare"
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
	img := screenshot(t, browser, dir)
	b := img.Bounds()
	ink, _ := inkedPixels(img)
	if ink < b.Dx()*b.Dy()/50 {
		t.Errorf("screenshot %dx%d has %d non-white pixels: blank", b.Dx(), b.Dy(), ink)
	}
	// The first series' lines, in the charts' first color (antialiased at their edges).
	if near := pixelsNear(img, seriesColor(0), 40); near < 300 {
		t.Errorf("screenshot has %d pixels of the charts' first line color: the SVG charts did not render", near)
	}
}

func diff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// screenshot renders dir's page in the browser, headless, 1200×2000, and returns the picture.
func screenshot(t *testing.T, browser, dir string) image.Image {
	t.Helper()
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
	return img
}

// pixelsNear counts img's pixels within tol of c in every channel.
func pixelsNear(img image.Image, c color.Color, tol uint32) int {
	cr, cg, cb, _ := c.RGBA()
	b := img.Bounds()
	near := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if diff(r>>8, cr>>8) < tol && diff(g>>8, cg>>8) < tol && diff(bl>>8, cb>>8) < tol {
				near++
			}
		}
	}
	return near
}

// TestComparePageRendersInChromium renders the BASE/NEW page of a regression: the failing
// verdict's red banner is drawn, and every driver's bars in its own color.
func TestComparePageRendersInChromium(t *testing.T) {
	browser := chromium(t)
	base, nw := baseNewFiles(t)
	cmp, err := compare.Compare([]*results.File{base}, []*results.File{nw}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := WriteCompare(dir, []*results.File{base}, []*results.File{nw}, cmp, Options{}); err != nil {
		t.Fatal(err)
	}
	img := screenshot(t, browser, dir)
	if n := pixelsNear(img, color.RGBA{0xfd, 0xe2, 0xe1, 0xff}, 4); n < 2000 {
		t.Errorf("%d pixels of the failing verdict's red: no banner or regression cells", n)
	}
	for i, d := range gridDrivers {
		if n := pixelsNear(img, seriesColor(i), 12); n < 500 {
			t.Errorf("%d pixels of %s's color %s: its bars did not render", n, d, svgColor(seriesColor(i)))
		}
	}
}
