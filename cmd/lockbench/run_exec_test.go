package main

import (
	"io"
	"slices"
	"testing"

	"github.com/lockbench/lockbench/extdriver"
)

// TestExecNullRow: lockbench run with an external driver gets the null adapter's row (when
// lockbench has it built in, as its main makes it), unless --exec-null=false; sweep does not.
func TestExecNullRow(t *testing.T) {
	extdriver.SetNullCommand([]string{"/bin/lockbench", "null-adapter"})
	t.Cleanup(func() { extdriver.SetNullCommand(nil) })
	ext := "exec:x=/bin/x"
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--driver", "lockcore," + ext}, []string{"lockcore", ext, extdriver.NullSpec}},
		{[]string{"--driver", "lockcore," + ext, "--exec-null=false"}, []string{"lockcore", ext}},
		{[]string{"--driver", "lockcore,naive"}, []string{"lockcore", "naive"}},
	} {
		f, code, ok := parseRunFlags(c.args, io.Discard, io.Discard)
		if !ok || code != exitOK {
			t.Errorf("%q: exit %d", c.args, code)
			continue
		}
		if !slices.Equal(f.drivers, c.want) {
			t.Errorf("%q: drivers %q; want %q", c.args, f.drivers, c.want)
		}
	}
}
