package acl

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/rueidis"
)

// probe is one command with arguments of the shape lockbench sends, for redis.acl_check_cmd.
type probe struct {
	what string // how a refusal is named
	args []string
}

// probes returns, for prefix, a probe of every command lockbench needs on a lock key, then one
// per key and channel family (with a command already probed), so that a refusal names the
// command, or the key or channel it was refused.
func probes(prefix string, keys []string) []probe {
	lock := prefix + "0"
	tag := Tagged(lock)
	if !strings.Contains(lock, "{") {
		tag += "}"
	}
	queue, deadlines, token := "redisson_lock_queue:"+tag, "redisson_lock_timeout:"+tag, "redisson_lock_token:"+tag
	channel := "redisson_lock__channel:" + tag
	argsOf := map[string][]string{
		"evalsha":     {"evalsha", strings.Repeat("0", 40), "1", lock},
		"eval":        {"eval", "return 1", "1", lock},
		"script|load": {"script", "load", "return 1"}, "wait": {"wait", "0", "0"},
		"get": {"get", lock}, "set": {"set", lock, "v"}, "del": {"del", lock}, "exists": {"exists", lock},
		"pexpire": {"pexpire", lock, "1"}, "pexpireat": {"pexpireat", lock, "1"}, "pttl": {"pttl", lock},
		"getrange": {"getrange", lock, "0", "1"}, "incr": {"incr", token},
		"hget": {"hget", lock, "f"}, "hset": {"hset", lock, "f", "1"}, "hdel": {"hdel", lock, "f"},
		"hexists": {"hexists", lock, "f"}, "hincrby": {"hincrby", lock, "f", "1"}, "hkeys": {"hkeys", lock}, "hlen": {"hlen", lock},
		"lindex": {"lindex", queue, "0"}, "lpop": {"lpop", queue}, "lrange": {"lrange", queue, "0", "-1"},
		"lrem": {"lrem", queue, "0", "v"}, "rpush": {"rpush", queue, "v"},
		"zadd": {"zadd", deadlines, "1", "v"}, "zincrby": {"zincrby", deadlines, "1", "v"}, "zrange": {"zrange", deadlines, "0", "-1"},
		"zrem": {"zrem", deadlines, "v"}, "zscore": {"zscore", deadlines, "v"}, "type": {"type", lock},
		"publish": {"publish", channel, "0"}, "subscribe": {"subscribe", channel}, "unsubscribe": {"unsubscribe", channel},
		"spublish": {"spublish", channel, "0"}, "ssubscribe": {"ssubscribe", channel}, "sunsubscribe": {"sunsubscribe", channel},
		"client|tracking": {"client", "tracking", "on"}, "ping": {"ping"}, "time": {"time"}, "info": {"info", "server"},
		"scan": {"scan", "0"}, "cluster|slots": {"cluster", "slots"}, "command": {"command"}, "cluster|info": {"cluster", "info"},
		"cluster|nodes": {"cluster", "nodes"}, "asking": {"asking"}, "role": {"role"},
	}
	var ps []probe
	for _, g := range Commands {
		args, ok := argsOf[g.Name]
		if !ok {
			panic("acl: no probe for " + g.Name)
		}
		ps = append(ps, probe{strings.ToUpper(strings.ReplaceAll(g.Name, "|", " ")) + " (" + describeArgs(args) + ")", args})
	}
	channels := []string{channel, channel + ":id:1", "redisson_rwlock:" + tag}
	// Scripts declare their channel among their keys: a channel must be a key too.
	for _, k := range append([]string{lock, tag + ":id:1:rwlock_timeout:1", queue, deadlines, token, "redisson_unlock_latch:" + tag + ":r", "rueidislock:0:" + lock}, channels...) {
		ps = append(ps, probe{"key " + k, []string{"exists", k}})
	}
	for _, c := range channels {
		ps = append(ps, probe{"channel " + c, []string{"publish", c, "0"}})
	}
	for _, k := range keys {
		ps = append(ps, probe{"key " + k, []string{"exists", k}})
	}
	return ps
}

func describeArgs(args []string) string {
	return strings.Join(args, " ")
}

// checkScript runs redis.acl_check_cmd (Redis 7.0 and later) on each probe, given as ARGV: the
// count of its arguments, then the arguments. It returns the indexes (from 1) of the refused
// probes, or the error of the first probe the server could not check (a command it does not
// know).
const checkScript = `
local refused = {}
local i, n = 1, 0
while i <= #ARGV do
  local count = tonumber(ARGV[i])
  local cmd = {}
  for j = 1, count do cmd[j] = ARGV[i + j] end
  n = n + 1
  local ok, allowed = pcall(redis.acl_check_cmd, unpack(cmd))
  if ok and not allowed then table.insert(refused, n) end
  i = i + count + 1
end
return refused
`

// Diagnose asks the server at the other end of c (a client of one data node, logged in as the
// user to check) which of what lockbench needs with keys under prefix that user may not do,
// and returns them named: "HINCRBY (hincrby lockbench:0 f 1)", "key redisson_lock_queue:{…}",
// "channel …". It runs one EVAL of redis.acl_check_cmd, which checks without running anything;
// EVAL itself refused is returned as the one refusal. Commands the server does not know (SPUBLISH
// before Redis 7) are not refusals. An error means the server could not tell (Redis before 7.0
// has no redis.acl_check_cmd). keys are keys of other shapes to probe too, named "key K" when
// refused: an external adapter's declared keys for a lock name (keyspace.Declared.Key).
func Diagnose(ctx context.Context, c rueidis.Client, prefix string, keys ...string) ([]string, error) {
	ps := probes(prefix, keys)
	var argv []string
	for _, p := range ps {
		argv = append(argv, strconv.Itoa(len(p.args)))
		argv = append(argv, p.args...)
	}
	resp := c.Do(ctx, c.B().Eval().Script(checkScript).Numkeys(0).Arg(argv...).Build())
	if err := resp.Error(); err != nil {
		if IsRefusal(err) {
			return []string{"EVAL (" + firstLine(err.Error()) + ")"}, nil
		}
		return nil, fmt.Errorf("acl: the server cannot check ACL rules (redis.acl_check_cmd needs Redis 7.0): %w", err)
	}
	idx, err := resp.AsIntSlice()
	if err != nil {
		return nil, fmt.Errorf("acl: redis.acl_check_cmd: %w", err)
	}
	var refused []string
	for _, i := range idx {
		if i >= 1 && int(i) <= len(ps) {
			refused = append(refused, ps[i-1].what)
		}
	}
	return refused, nil
}

// IsRefusal reports whether err is the server refusing the user a command, key or channel:
// NOPERM, or, inside a Lua script, Redis 7.0's "The user executing the script can't …".
func IsRefusal(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "NOPERM") || strings.Contains(msg, "user executing the script can't") || strings.Contains(msg, "ACL failure in script")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
