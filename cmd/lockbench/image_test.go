package main

import "testing"

// Bad input for lockbench image and for --image, refused before anything is built or started.
func TestImageAndProviderBadInput(t *testing.T) {
	t.Parallel()
	cases := [][]string{
		{"image"},
		{"image", "push"},
		{"image", "build", "extra"},
		{"image", "build", "--tag", "Not A Tag"},
		{"run", "--image", "redis:7"}, // --provider native
		{"run", "--provider", "docker", "--image", "no spaces allowed"},
		{"up", "--image", "redis:7"},
	}
	for _, args := range cases {
		code, _, errs := lockbenchIn(args...)
		if code != exitUsage || errs == "" {
			t.Errorf("lockbench %v: exit %d, stderr %q; want %d and a message", args, code, errs, exitUsage)
		}
	}
}
