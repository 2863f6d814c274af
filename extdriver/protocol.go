package extdriver

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/drivers"
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
)

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
	// Kinds are the lock kinds the adapter offers: "mutex", and "reentrant" when the same owner
	// may take a lock it holds again.
	Kinds []string `json:"kinds"`
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
		switch name {
		case "mutex":
			k |= drivers.KindMutex
		case "reentrant":
			k |= drivers.KindReentrant
		default:
			return h, 0, fmt.Errorf("%w: hello: kind %q (this lockbench drives mutex and reentrant)", ErrGarbage, name)
		}
	}
	if !k.Has(drivers.KindMutex) {
		return h, 0, fmt.Errorf("%w: hello: kinds %v lack mutex", ErrGarbage, h.Kinds)
	}
	return h, k, nil
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
	id, rest, _ := strings.Cut(line, " ")
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return Reply{}, fmt.Errorf("%w: %q does not start with a request id", ErrGarbage, clip(line))
	}
	status, msg, _ := strings.Cut(rest, " ")
	switch status {
	case StatusOK, StatusTimeout, StatusNotOwner, StatusError:
	default:
		return Reply{}, fmt.Errorf("%w: %q: status %q is none of ok, timeout, notowner, error", ErrGarbage, clip(line), clip(status))
	}
	return Reply{ID: n, Status: status, Message: msg}, nil
}

// appendRequest appends "ID OP ARGS…\n" to b.
func appendRequest(b []byte, id uint64, op string, args ...string) []byte {
	b = strconv.AppendUint(b, id, 10)
	b = append(b, ' ')
	b = append(b, op...)
	for _, a := range args {
		b = append(b, ' ')
		b = append(b, a...)
	}
	return append(b, '\n')
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
