package acl

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadOptions is wrapped by Options.Check's errors.
var ErrBadOptions = errors.New("bad ACL options")

// Check says what is wrong with o before SetUser: an empty or blank KeyPrefix (the user would
// get every key), spaces in KeyPrefix (Redis refuses them in key patterns) or in User, a
// negative DB. An empty User is refused too: Check is for options a user typed, where the
// default has been filled in. Each message starts with the option's name as lockbench's flags
// spell it (key-prefix, user, db), and wraps ErrBadOptions.
func (o Options) Check() error {
	switch {
	case strings.TrimSpace(o.KeyPrefix) == "":
		return badOptions("key-prefix must not be empty: the user would get every key")
	case strings.ContainsAny(o.KeyPrefix, " \t\r\n"):
		return badOptions("key-prefix %q: Redis refuses spaces in ACL key patterns: pick a prefix without", o.KeyPrefix)
	case o.User == "" || strings.ContainsAny(o.User, " \t\r\n"):
		return badOptions("user %q: want a name without spaces", o.User)
	case o.DB < 0:
		return badOptions("db %d must not be negative", o.DB)
	}
	for _, k := range o.Keys {
		if strings.TrimSpace(k) == "" || strings.ContainsAny(k, " \t\r\n") {
			return badOptions("key pattern %q: want a pattern without spaces", k)
		}
	}
	return nil
}

// optionsError is ErrBadOptions without its text in the message.
type optionsError struct{ msg string }

func (e *optionsError) Error() string { return e.msg }
func (e *optionsError) Unwrap() error { return ErrBadOptions }

func badOptions(format string, a ...any) error { return &optionsError{fmt.Sprintf(format, a...)} }
