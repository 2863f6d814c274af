package results

import (
	"fmt"
	"regexp"
)

// MaxLabelLen bounds a File's Label, so that a legend or a table column stays readable.
const MaxLabelLen = 40

// labelPattern is what a File's Label may be: a letter or digit, then letters, digits and
// ". _ + -" ("BASE", "v1.2", "rc-2", "pr_481"). No "=", "/" or space, so a label never reads as
// a lockbench report NAME=PATH argument, a path or two words.
var labelPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)

// CheckLabel returns nil when name can label a result file (File.Label, lockbench run --label),
// else an error saying what a label may be. It is safe for concurrent use.
func CheckLabel(name string) error {
	if len(name) > MaxLabelLen || !labelPattern.MatchString(name) {
		return fmt.Errorf("label %q: want 1 to %d letters, digits and . _ + -, starting with a letter or digit (e.g. BASE, v1.2, pr-481)", name, MaxLabelLen)
	}
	return nil
}
