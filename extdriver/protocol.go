package extdriver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/keyspace"
)

// Protocol is the protocol version this package speaks; an adapter's hello names the one it
// speaks.
const Protocol = 1

// Operations lockbench sends: "ID OP ARGS…", fields separated by one space.
const (
	// OpAcquire is "ID acquire OWNER NAME WAIT_MS": take lock NAME for OWNER, waiting at most
	// WAIT_MS milliseconds (-1: until granted or cancelled). Replies: ok, timeout, error.
	OpAcquire = "acquire"
	// OpRelease is "ID release OWNER NAME": release one hold of NAME by OWNER. Replies: ok,
	// notowner (OWNER does not hold it: never did, or its lease ran out), error.
	OpRelease = "release"
	// OpCancel is "ID cancel": stop waiting in acquire ID, which still gets its own reply (ok if
	// the grant won the race, and lockbench then releases it; else timeout). No reply of its own.
	OpCancel = "cancel"
	// OpPing is "ID ping": answered "ID ok" at once; an adapter that does not is hung.
	OpPing = "ping"

	// The kinds beyond mutex and reentrant, sent only to an adapter whose hello claims them.

	// OpAcquireRead is "ID racquire OWNER NAME WAIT_MS": a read hold of the read-write lock NAME
	// (kind rw), shared with other readers. Replies as acquire.
	OpAcquireRead = "racquire"
	// OpReleaseRead is "ID rrelease OWNER NAME": release one read hold. Replies as release.
	OpReleaseRead = "rrelease"
	// OpAcquireWrite is "ID wacquire OWNER NAME WAIT_MS": the write lock of the read-write lock
	// NAME (kind rw), which excludes readers and writers. Replies as acquire.
	OpAcquireWrite = "wacquire"
	// OpReleaseWrite is "ID wrelease OWNER NAME": release the write lock. Replies as release.
	OpReleaseWrite = "wrelease"
	// OpAcquireMulti is "ID macquire OWNER WAIT_MS NAME NAME…": every lock named, all or nothing
	// (kind multi), without deadlock against owners taking overlapping sets. Replies as acquire.
	OpAcquireMulti = "macquire"
	// OpReleaseMulti is "ID mrelease OWNER NAME NAME…": release the locks taken by one macquire.
	// Replies as release (notowner when OWNER did not hold one of them).
	OpReleaseMulti = "mrelease"
	// OpAcquireFenced is "ID facquire OWNER NAME WAIT_MS": the lock NAME with a fencing token
	// (kind fenced): "ID ok TOKEN", TOKEN a decimal integer greater than that of every earlier
	// grant of NAME. Released with release.
	OpAcquireFenced = "facquire"
)

// Kind names in a hello's kinds, one per drivers.Kind the protocol drives.
const (
	KindMutex     = "mutex"
	KindReentrant = "reentrant"
	KindRW        = "rw"
	KindMulti     = "multi"
	KindFenced    = "fenced"
	// KindFair claims that acquire grants a contended lock to its waiters in the order their
	// acquires arrived (FIFO), as Redisson's RFairLock does: no request of its own. A library
	// with a fair and an unfair lock is two adapters (or one started with an argument), one
	// driver each, as lockbench's built-in lockcore and lockcore-fair are.
	KindFair = "fair"
)

// protocolKinds are the kinds a hello may claim.
var protocolKinds = []struct {
	name string
	k    drivers.Kind
}{
	{KindMutex, drivers.KindMutex}, {KindReentrant, drivers.KindReentrant}, {KindRW, drivers.KindRW},
	{KindMulti, drivers.KindMulti}, {KindFenced, drivers.KindFenced}, {KindFair, drivers.KindFair},
}

// Kinds is every kind the protocol drives.
const Kinds = drivers.KindMutex | drivers.KindReentrant | drivers.KindRW | drivers.KindMulti | drivers.KindFenced | drivers.KindFair

// Replies an adapter sends: "ID STATUS [MESSAGE]".
const (
	// StatusOK: granted, released, or pong.
	StatusOK = "ok"
	// StatusTimeout: the wait ran out (or was cancelled) without a grant. Losing a race, not an
	// error.
	StatusTimeout = "timeout"
	// StatusNotOwner: a release by an owner that does not hold the lock.
	StatusNotOwner = "notowner"
	// StatusError: the library or Redis failed; the rest of the line says how.
	StatusError = "error"
)

// helloPrefix starts the first line an adapter writes; a JSON object follows.
const helloPrefix = "hello "

// Hello is what an adapter says about itself on its first line: "hello {JSON}". lockbench
// records it in the run's driver settings.
type Hello struct {
	// Protocol is the protocol version the adapter speaks: Protocol.
	Protocol int `json:"protocol"`
	// Library is the lock library, e.g. "redis-py redis.lock.Lock".
	Library string `json:"library"`
	// Version is the library's version.
	Version string `json:"version"`
	// Language is the adapter's language and runtime, e.g. "python 3.11.2"; optional.
	Language string `json:"language,omitempty"`
	// Kinds are the lock kinds the adapter offers (the Kind… constants): "mutex", "reentrant"
	// when the same owner may take a lock it holds again, "rw", "multi" and "fenced" when it
	// answers their requests.
	Kinds []string `json:"kinds"`
	// Keys are the keys the adapter's library makes besides the lock name itself, as patterns
	// over the lock name (keyspace.ParseDeclared): "{name}:tokens", "queue:{{name}}". Optional;
	// at most keyspace.MaxDeclared. lockbench cleans them with its own keys on a deployment it
	// attached to, and driver-check fails an adapter that makes keys it did not declare.
	Keys []string `json:"keys,omitempty"`
}

// Declared returns the hello's keys as keyspace shapes; nil for a hello ParseHello would
// refuse.
func (h Hello) Declared() []keyspace.Declared {
	ds, err := keyspace.ParseDeclaredList(h.Keys)
	if err != nil {
		return nil
	}
	return ds
}

// ErrGarbage is wrapped by the errors about a line that does not follow the protocol.
var ErrGarbage = errors.New("extdriver: not a protocol line")

// ParseHello decodes the adapter's first line.
func ParseHello(line string) (Hello, drivers.Kind, error) {
	var h Hello
	body, ok := strings.CutPrefix(line, helloPrefix)
	if !ok {
		return h, 0, fmt.Errorf("%w: the first line must be %q followed by a JSON object, got %q", ErrGarbage, helloPrefix, clip(line))
	}
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		return h, 0, fmt.Errorf("%w: hello: %v", ErrGarbage, err)
	}
	switch {
	case h.Protocol != Protocol:
		return h, 0, fmt.Errorf("%w: hello: protocol %d, lockbench speaks %d", ErrGarbage, h.Protocol, Protocol)
	case strings.TrimSpace(h.Library) == "":
		return h, 0, fmt.Errorf("%w: hello: no library", ErrGarbage)
	}
	var k drivers.Kind
	for _, name := range h.Kinds {
		kind := KindOf(name)
		if kind == 0 {
			return h, 0, fmt.Errorf("%w: hello: kind %q (this lockbench drives %s)", ErrGarbage, name, Kinds)
		}
		k |= kind
	}
	if !k.Has(drivers.KindMutex) {
		return h, 0, fmt.Errorf("%w: hello: kinds %v lack mutex", ErrGarbage, h.Kinds)
	}
	if _, err := keyspace.ParseDeclaredList(h.Keys); err != nil {
		return h, 0, fmt.Errorf("%w: hello: keys: %w", ErrGarbage, err)
	}
	return h, k, nil
}

// KindOf is the drivers.Kind a hello's kind name stands for, 0 for none.
func KindOf(name string) drivers.Kind {
	for _, e := range protocolKinds {
		if e.name == name {
			return e.k
		}
	}
	return 0
}

// KindNames are the hello's names of the kinds in k.
func KindNames(k drivers.Kind) []string {
	var names []string
	for _, e := range protocolKinds {
		if k.Has(e.k) {
			names = append(names, e.name)
		}
	}
	return names
}

// Reply is one decoded answer.
type Reply struct {
	// ID is the request's id.
	ID uint64
	// Status is one of the Status constants.
	Status string
	// Message is the rest of the line: why, for notowner and error.
	Message string
}

// ParseReply decodes "ID STATUS [MESSAGE]".
func ParseReply(line string) (Reply, error) {
	id, status, msg, err := parseReply([]byte(line))
	if err != nil {
		return Reply{}, err
	}
	return Reply{ID: id, Status: status, Message: string(msg)}, nil
}

// parseReply decodes "ID STATUS [MESSAGE]" without allocating: status is one of the Status
// constants, msg is a slice of line.
func parseReply(line []byte) (id uint64, status string, msg []byte, err error) {
	i := 0
	for ; i < len(line) && line[i] >= '0' && line[i] <= '9'; i++ {
		if id > (1<<64-1-9)/10 {
			return 0, "", nil, fmt.Errorf("%w: %q: the request id is too large", ErrGarbage, clip(string(line)))
		}
		id = id*10 + uint64(line[i]-'0')
	}
	if i == 0 || i == len(line) || line[i] != ' ' {
		return 0, "", nil, fmt.Errorf("%w: %q does not start with a request id and a space", ErrGarbage, clip(string(line)))
	}
	rest := line[i+1:]
	st := rest
	if j := bytes.IndexByte(rest, ' '); j >= 0 {
		st, msg = rest[:j], rest[j+1:]
	}
	switch string(st) { // no allocation: the compiler compares in place
	case StatusOK:
		status = StatusOK
	case StatusTimeout:
		status = StatusTimeout
	case StatusNotOwner:
		status = StatusNotOwner
	case StatusError:
		status = StatusError
	default:
		return 0, "", nil, fmt.Errorf("%w: %q: status %q is none of ok, timeout, notowner, error", ErrGarbage, clip(string(line)), clip(string(st)))
	}
	return id, status, msg, nil
}

// validField reports whether s can be one field of a request: not empty, no space, no line break.
func validField(s string) bool {
	return s != "" && !strings.ContainsAny(s, " \t\r\n")
}

// clip shortens what an adapter wrote for an error message.
func clip(s string) string {
	const max = 120
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
