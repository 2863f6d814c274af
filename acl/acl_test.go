package acl

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/redis/rueidis"
)

func TestSetUser(t *testing.T) {
	got := Line(SetUser(Options{KeyPrefix: "bench:", Password: "secret"}))
	for _, want := range []string{
		"ACL SETUSER lockbench reset on #2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b ",
		" ~bench:* ~{bench:* ~redisson_lock_queue:{bench:* ~redisson_lock_timeout:{bench:* ~redisson_lock_token:{bench:* ~redisson_unlock_latch:{bench:* ~rueidislock:*:bench:* ~redisson_lock__channel:{bench:* ~redisson_rwlock:{bench:* ",
		" &redisson_lock__channel:{bench:* &redisson_rwlock:{bench:* ",
		" +evalsha +eval +script|load +wait ", " +client|tracking ", " +asking",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("line lacks %q:\n%s", want, got)
		}
	}
	for _, never := range []string{"secret", "+@", "+flushall", "+config", " +keys", "~* ", "&* ", "+select"} {
		if strings.Contains(got, never) {
			t.Errorf("line has %q:\n%s", never, got)
		}
	}
	if got := Line(SetUser(Options{KeyPrefix: "bench:", Keys: []string{"bench:*:tokens", "bench:*"}})); !strings.Contains(got, " ~bench:* ") || strings.Count(got, "~bench:*") != 2 || !strings.Contains(got, " ~bench:*:tokens ") {
		t.Errorf("SetUser with Keys: %s; want bench:*:tokens added, bench:* once", got)
	}
	if got := SetUser(Options{KeyPrefix: "p", User: "u", DB: 3}); !slices.Contains(got, "+select|3") || got[2] != "u" || slices.Contains(got, "#") {
		t.Errorf("SetUser(user u, db 3) = %v", got)
	}
}

func TestPatternsOfPrefixWithHashTagOrGlob(t *testing.T) {
	if got, want := KeyPatterns("{b}:"), []string{"{b}:*", "redisson_lock_queue:{b}:*", "redisson_lock_timeout:{b}:*", "redisson_lock_token:{b}:*", "redisson_unlock_latch:{b}:*", "rueidislock:*:{b}:*",
		"redisson_lock__channel:{b}:*", "redisson_rwlock:{b}:*"}; !slices.Equal(got, want) {
		t.Errorf("KeyPatterns({b}:) = %q, want %q", got, want)
	}
	if got := KeyPatterns("a*[1]")[0]; got != `a\*\[1\]*` {
		t.Errorf("KeyPatterns(a*[1])[0] = %q", got)
	}
}

func TestLineQuotes(t *testing.T) {
	cases := map[string]string{"plain": "plain", "two words": `"two words"`, `q"b\`: `"q\"b\\"`, "": `""`, "é": `"\xc3\xa9"`}
	for in, want := range cases {
		if got := Line([]string{in}); got != want {
			t.Errorf("Line(%q) = %s, want %s", in, got, want)
		}
	}
}

// userClient makes the user from args on srv and returns a client logged in as it.
func userClient(t *testing.T, admin rueidis.Client, addr string, args []string) rueidis.Client {
	t.Helper()
	if err := admin.Do(t.Context(), admin.B().Arbitrary(args...).Build()).Error(); err != nil {
		t.Fatalf("%s: %v", Line(args), err)
	}
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, DisableCache: true,
		Username: args[2], Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestDiagnose(t *testing.T) {
	srv := redistest.NewServer(t)
	admin, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: srv.Addrs(), ForceSingleClient: true, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx := context.Background()
	full := SetUser(Options{KeyPrefix: "bench:", Password: "pw", User: "full"})
	c := userClient(t, admin, srv.Addr(), full)
	if refused, err := Diagnose(ctx, c, "bench:"); err != nil || len(refused) != 0 {
		t.Errorf("the full user: refused %q, %v", refused, err)
	}
	if refused, err := Diagnose(ctx, c, "other:"); err != nil || len(refused) < 6 || !strings.HasPrefix(refused[0], "EVALSHA") {
		t.Errorf("the full user under another prefix: refused %q, %v", refused, err)
	}

	// An adapter's declared keys: probed when asked for, granted with Options.Keys.
	if refused, err := Diagnose(ctx, c, "bench:", "queue:{bench:0}"); err != nil || !slices.Equal(refused, []string{"key queue:{bench:0}"}) {
		t.Errorf("the full user, an undeclared key: refused %q, %v; want the key named", refused, err)
	}
	declared := userClient(t, admin, srv.Addr(), SetUser(Options{KeyPrefix: "bench:", Password: "pw", User: "declared", Keys: []string{"queue:{bench:*}"}}))
	if refused, err := Diagnose(ctx, declared, "bench:", "queue:{bench:0}"); err != nil || len(refused) != 0 {
		t.Errorf("a user granted the declared keys: refused %q, %v", refused, err)
	}
	if refused, err := Diagnose(ctx, declared, "bench:", "queue:{other:0}"); err != nil || len(refused) != 1 {
		t.Errorf("a user granted bench:'s declared keys, other:'s: refused %q, %v; want it refused", refused, err)
	}

	lacking := func(user string, drop ...string) rueidis.Client {
		args := slices.DeleteFunc(SetUser(Options{KeyPrefix: "bench:", Password: "pw", User: user}), func(a string) bool { return slices.Contains(drop, a) })
		return userClient(t, admin, srv.Addr(), args)
	}
	for _, c := range []struct {
		user string
		drop []string
		want string
	}{
		{"nohincrby", []string{"+hincrby"}, "HINCRBY (hincrby bench:0 f 1)"},
		{"noqueue", []string{"~redisson_lock_queue:{bench:*"}, "LINDEX (lindex redisson_lock_queue:{bench:0} 0)"},
		{"nochannel", []string{"&redisson_rwlock:{bench:*"}, "channel redisson_rwlock:{bench:0}"},
		{"nochannelkey", []string{"~redisson_lock__channel:{bench:*"}, "key redisson_lock__channel:{bench:0}"},
		{"noeval", []string{"+eval"}, "EVAL ("},
	} {
		refused, err := Diagnose(ctx, lacking(c.user, c.drop...), "bench:")
		if err != nil || len(refused) == 0 || !strings.HasPrefix(refused[0], c.want) {
			t.Errorf("%s: refused %q, %v; want first %q", c.user, refused, err, c.want)
		}
	}
}

func TestGlobEscape(t *testing.T) {
	tests := map[string]string{
		"lockbench:": "lockbench:",
		"bench[1]:":  `bench\[1\]:`,
		"a*b?c":      `a\*b\?c`,
		`back\slash`: `back\\slash`,
		"{tag}-x^":   "{tag}-x^",
	}
	for in, want := range tests {
		if got := GlobEscape(in); got != want {
			t.Errorf("GlobEscape(%q) = %q, want %q", in, got, want)
		}
	}
}
