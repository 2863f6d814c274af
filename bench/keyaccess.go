package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/acl"
	"github.com/lockbench/lockbench/keyspace"
	"github.com/lockbench/lockbench/target"
	"github.com/redis/rueidis"
)

// ErrKeysRefused is wrapped by KeyAccess's error when the deployment's ACL refuses the user the
// lock keys of the prefix: every driver would fail. The error wraps ErrBadSpec too.
var ErrKeysRefused = errors.New("bench: the user may not use lockbench's keys")

// KeyAccess asks the first master of t, before anything is measured, whether the user may use
// lockbench's keys under prefix (acl.Diagnose: one EVAL of redis.acl_check_cmd, which runs
// nothing). It returns an error wrapping ErrKeysRefused for a refusal that dooms every driver,
// the lock key itself, naming the --key-prefix to use when one can be found; nil when the lock
// keys are allowed or the server cannot tell (Redis before 7.0, or EVAL refused: the run then
// reports its refusals as it always has). Other refusals (a helper key or command only some
// drivers use, a key an external adapter declared) are returned as warn, for the caller to
// show. declared are the run's adapters' declared keys (extdriver.DeclaredKeys): the key of
// lock prefix+"0" of each is probed too.
func KeyAccess(ctx context.Context, t *target.Target, prefix string, declared ...keyspace.Declared) (warn []string, err error) {
	refuse, warn := keyAccess(ctx, t, prefix, declared)
	if refuse != "" {
		return nil, &badSpec{msg: refuse, cause: ErrKeysRefused}
	}
	return warn, nil
}

func keyAccess(ctx context.Context, t *target.Target, prefix string, declared []keyspace.Declared) (refuse string, warn []string) {
	ms := t.Masters()
	if len(ms) == 0 {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(ctx, target.InspectTimeout)
	defer cancel()
	c, addr := ms[0].Client, ms[0].Addr
	var extra []string
	for _, d := range declared {
		extra = append(extra, d.Key(prefix+"0"))
	}
	refused, err := acl.Diagnose(ctx, c, prefix, extra...)
	if err != nil || len(refused) == 0 {
		return "", nil
	}
	user := t.Conn().User()
	if user == "" {
		user = "default"
	}
	lockKey := "key " + prefix + "0"
	if len(refused) == 1 && strings.HasPrefix(refused[0], "EVAL (") {
		return "", nil // the run reports a refused EVAL with the driver that needs it
	}
	fix := fmt.Sprintf("'lockbench acl --key-prefix %s --user %s%s' prints the rules a lockbench user needs", prefix, user, adapterKeysFlags(declared))
	for _, r := range refused {
		if r != lockKey {
			continue
		}
		for _, cand := range prefixCandidates(ctx, c, user, prefix) {
			if again, err := acl.Diagnose(ctx, c, cand); err == nil && len(again) == 0 {
				return fmt.Sprintf("user %q may not use the keys of --key-prefix %s on %s (%s refused): its ACL allows %s*; run with --key-prefix %s", user, prefix, addr, strings.Join(keysOnly(refused), ", "), cand, cand), nil
			}
		}
		return fmt.Sprintf("user %q may not use the keys of --key-prefix %s on %s (%s refused): give --key-prefix the prefix its key patterns (~…) allow (an admin's ACL GETUSER %s shows them), or grant it; %s", user, prefix, addr, strings.Join(keysOnly(refused), ", "), user, fix), nil
	}
	for _, r := range refused {
		warn = append(warn, fmt.Sprintf("user %q may not use %s on %s: drivers or lock kinds that need it will fail; %s", user, r, addr, fix))
	}
	return "", warn
}

// adapterKeysFlags is lockbench acl's --adapter-keys for declared, with a space before it; ""
// for none.
func adapterKeysFlags(declared []keyspace.Declared) string {
	var out string
	for _, d := range declared {
		out += " --adapter-keys '" + d.Pattern + "'"
	}
	return out
}

// keysOnly returns the key and channel refusals of Diagnose: the ones a prefix explains.
func keysOnly(refused []string) []string {
	var out []string
	for _, r := range refused {
		if strings.HasPrefix(r, "key ") || strings.HasPrefix(r, "channel ") {
			out = append(out, strings.TrimPrefix(r, "key "))
		}
	}
	if len(out) > 3 {
		out = append(out[:3], fmt.Sprintf("and %d more", len(out)-3))
	}
	return out
}

// prefixCandidates are the prefixes user may be meant to use instead of prefix: those its key
// patterns name, when the server lets it read them (ACL GETUSER, which a least-privilege user
// usually may not run), then "<user>:", the convention of 'lockbench acl' (--user bench
// --key-prefix bench:). Each is checked with Diagnose before it is suggested.
func prefixCandidates(ctx context.Context, c rueidis.Client, user, prefix string) []string {
	var out []string
	add := func(p string) {
		if p != "" && p != prefix && !strings.ContainsAny(p, "*?[]\\") {
			for _, q := range out {
				if q == p {
					return
				}
			}
			out = append(out, p)
		}
	}
	if m, err := c.Do(ctx, c.B().AclGetuser().Username(user).Build()).AsMap(); err == nil {
		if v, ok := m["keys"]; ok {
			var patterns []string
			if s, err := v.ToString(); err == nil { // Redis 7: "~bench:* ~{bench:*"
				patterns = strings.Fields(s)
			} else if a, err := v.AsStrSlice(); err == nil { // Redis 6: one pattern each
				patterns = a
			}
			for _, p := range patterns {
				p = strings.TrimLeft(p, "%RW~")
				if lit, ok := strings.CutSuffix(p, "*"); ok && !strings.ContainsAny(lit, "{}") {
					add(lit)
				}
			}
		}
	}
	add(user + ":")
	return out
}
