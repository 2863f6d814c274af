package acl

import (
	"errors"
	"testing"
)

func TestOptionsCheck(t *testing.T) {
	t.Parallel()
	if err := (Options{User: DefaultUser, KeyPrefix: "bench:", DB: 3}).Check(); err != nil {
		t.Errorf("Check of good options: %v", err)
	}
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{User: "u", KeyPrefix: " "}, "key-prefix must not be empty: the user would get every key"},
		{Options{User: "u", KeyPrefix: "a b:"}, `key-prefix "a b:": Redis refuses spaces in ACL key patterns: pick a prefix without`},
		{Options{User: "a b", KeyPrefix: "p:"}, `user "a b": want a name without spaces`},
		{Options{KeyPrefix: "p:"}, `user "": want a name without spaces`},
		{Options{User: "u", KeyPrefix: "p:", DB: -1}, "db -1 must not be negative"},
		{Options{User: "u", KeyPrefix: "p:", Keys: []string{""}}, `key pattern "": want a pattern without spaces`},
		{Options{User: "u", KeyPrefix: "p:", Keys: []string{"p:* x"}}, `key pattern "p:* x": want a pattern without spaces`},
	} {
		if err := tc.o.Check(); !errors.Is(err, ErrBadOptions) || err.Error() != tc.want {
			t.Errorf("Check(%+v) = %v; want ErrBadOptions, %q", tc.o, err, tc.want)
		}
	}
}
