package extdriver

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/lockbench/lockbench/drivers"
)

// SchemePrefix starts a driver spec that runs an adapter: "exec:NAME=COMMAND".
const SchemePrefix = "exec"

// Spec is a parsed "exec:NAME=COMMAND".
type Spec struct {
	// Name is the short name the user gave, e.g. "redis-py".
	Name string
	// Argv is COMMAND split into words; Argv[0] is looked up in PATH. No shell runs it.
	Argv []string
}

var specName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ParseSpec parses "exec:NAME=COMMAND", or NullSpec ("exec:null": the null adapter built into
// the program, see SetNullCommand). NAME is letters, digits, '.', '_', '-'. COMMAND is split
// into words at spaces and tabs; single or double quotes make one word of what they enclose
// (no escapes inside). Colons and commas in COMMAND are the command's: the spec is not split at
// them (--driver is read as CSV, so a command with a comma is given in double quotes there).
// Errors wrap drivers.ErrBadOption.
func ParseSpec(spec string) (Spec, error) {
	rest, ok := strings.CutPrefix(spec, SchemePrefix+":")
	if !ok {
		return Spec{}, fmt.Errorf("%w: %q does not start with %s:", drivers.ErrBadOption, spec, SchemePrefix)
	}
	if spec == NullSpec {
		argv := NullCommand()
		if argv == nil {
			return Spec{}, fmt.Errorf("%w: %s with no command runs the null adapter built into lockbench, which this program has not: give %s=COMMAND (e.g. a build of ./adapters/null)", drivers.ErrBadOption, NullSpec, NullSpec)
		}
		return Spec{Name: NullName, Argv: argv}, nil
	}
	name, command, ok := strings.Cut(rest, "=")
	if !ok || !specName.MatchString(name) {
		return Spec{}, fmt.Errorf("%w: %q: want exec:NAME=COMMAND, NAME of letters, digits, '.', '_', '-'", drivers.ErrBadOption, spec)
	}
	argv, err := splitWords(command)
	if err != nil {
		return Spec{}, fmt.Errorf("%w: %q: %v", drivers.ErrBadOption, spec, err)
	}
	if len(argv) == 0 {
		return Spec{}, fmt.Errorf("%w: %q: no command after %s=", drivers.ErrBadOption, spec, name)
	}
	return Spec{Name: name, Argv: argv}, nil
}

// splitWords splits s at spaces and tabs; quotes group.
func splitWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case r == '\n' || r == '\r':
			return nil, fmt.Errorf("a line break in the command")
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c", quote)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}
