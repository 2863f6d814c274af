package kept

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// WriteStatus and StopAll on a state directory with nothing, then with a stale up and an
// unreadable file: status names both and is unhealthy; StopAll removes them and says so.
func TestWriteStatusStopAll(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ name, want string }{{"", "nothing running\n"}, {"x", "nothing running as \"x\"\n"}} {
		var out bytes.Buffer
		if ok, err := WriteStatus(&out, dir, tc.name, time.Second); !ok || err != nil || out.String() != tc.want {
			t.Errorf("WriteStatus(empty, %q) = %v, %v, %q; want true, nil, %q", tc.name, ok, err, out.String(), tc.want)
		}
		out.Reset()
		if err := StopAll(&out, dir, tc.name, tc.name == "", time.Second); err != nil || out.String() != tc.want {
			t.Errorf("StopAll(empty, %q) = %v, %q; want nil, %q", tc.name, err, out.String(), tc.want)
		}
	}
	writeState(t, dir, "dead", exitedPid(t))
	if err := os.WriteFile(Path(dir, "garbage"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ok, err := WriteStatus(&out, dir, "", time.Second)
	if ok || err != nil || !strings.Contains(out.String(), "dead  single  native  pid ") || !strings.Contains(out.String(), "STALE: the up process is gone; 'lockbench down --name dead' cleans up") ||
		!strings.Contains(out.String(), "garbage  unreadable state file: ") {
		t.Errorf("WriteStatus = %v, %v:\n%s\nwant unhealthy, the stale up and the unreadable file named", ok, err, out.String())
	}
	out.Reset()
	if err := StopAll(&out, dir, "", true, 5*time.Second); err != nil || strings.Count(out.String(), "\n") != 2 || !strings.Contains(out.String(), `removed stale state of "dead"`) {
		t.Errorf("StopAll(all) = %v:\n%s\nwant the stale state and the unreadable file removed", err, out.String())
	}
	if files, _ := Files(dir); len(files) != 0 {
		t.Errorf("state files left: %v", files)
	}
}
