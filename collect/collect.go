// Package collect hands the results of a run's generator processes back without a file system
// every node mounts: each worker stores its result file in a Redis (the deployment under test, or
// a separate one) under a key of its run, in chunks with a checksum and an expiry, and whoever
// merges fetches them one at a time, checks that exactly the run's N processes are there, once
// each, and merges them as they come (results.FileMerger), holding one result at a time.
//
// Keys, all under lockbench:collect:{RUN}: (one hash tag, so a cluster keeps them on one node):
// "entries", a list with one "INDEX:NONCE" per stored result, pushed last, once its chunks are
// written; and "r:INDEX:NONCE", a hash with the result's "meta" (JSON: run, index, procs, size,
// SHA-256, chunks) and its chunks "0", "1", …. The nonce keeps a second worker given the same
// index from overwriting the first, so that the merge sees both and names the index.
package collect

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/lockbench/lockbench/conn"
	"github.com/redis/rueidis"
)

// Defaults for Options, written down once.
const (
	// DefaultTTL is how long a stored result is kept: long enough to merge a long run the next
	// day, short enough that a forgotten run does not stay.
	DefaultTTL = 24 * time.Hour
	// DefaultChunkSize is the largest value one command writes: large results (many timeline
	// histograms) go in several, so no single reply or request nears Redis' limits or holds
	// the server long.
	DefaultChunkSize = 256 << 10
	// EnvPassword holds the collection Redis' password when its URL has none: the data nodes'
	// LOCKBENCH_REDIS_PASSWORD is not sent to another server.
	EnvPassword = "LOCKBENCH_COLLECT_PASSWORD"
	// keyPrefix starts every key collect writes.
	keyPrefix = "lockbench:collect:"
)

// Errors, checked with errors.Is.
var (
	// ErrBadInput: an address or run id collect cannot use.
	ErrBadInput = errors.New("collect: bad input")
	// ErrMissing: fewer results than the run's processes; the error names the missing indexes.
	ErrMissing = errors.New("collect: results missing")
	// ErrDuplicate: two results for one process index.
	ErrDuplicate = errors.New("collect: a process stored twice")
	// ErrForeign: a result that is not of this run (another run id, or another process count).
	ErrForeign = errors.New("collect: a result of another run")
	// ErrCorrupt: a stored result whose chunks are missing or fail the checksum.
	ErrCorrupt = errors.New("collect: stored result damaged")
)

// Options say where results are collected. The zero value of a field means its default.
type Options struct {
	// Addr is the Redis to store results in, as users write it: host:port, redis://[user[:password]@]host[:port][/db],
	// rediss://… (TLS) or unix:///path.
	Addr string
	// CAFile verifies a rediss:// server's certificate (default: the system's roots).
	CAFile string
	// TTL is how long stored results are kept (DefaultTTL if 0).
	TTL time.Duration
	// ChunkSize is the largest piece of a result written by one command (DefaultChunkSize if 0).
	ChunkSize int
	// Getenv reads EnvPassword; nil means the process environment.
	Getenv func(string) string
}

func (o *Options) fill() {
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = DefaultChunkSize
	}
}

// Store is a connection to the collection Redis. It is safe for concurrent use.
type Store struct {
	c        rueidis.Client
	opt      Options
	settings *conn.Settings
}

// Settings checks opt's address and credentials without connecting, and returns them; errors
// wrap ErrBadInput and never contain a password.
func Settings(opt Options) (*conn.Settings, error) {
	if opt.Addr == "" {
		return nil, fmt.Errorf("%w: no address", ErrBadInput)
	}
	s, err := conn.NewSide(opt.Addr, opt.CAFile, EnvPassword, opt.Getenv)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return s, nil
}

// Open connects to the collection Redis and checks that it answers. Bad addresses wrap
// ErrBadInput; a server that cannot be reached or refuses the credentials gives conn's errors.
func Open(ctx context.Context, opt Options) (*Store, error) {
	opt.fill()
	s, err := Settings(opt)
	if err != nil {
		return nil, err
	}
	c, err := s.OpenSingle(ctx)
	if err != nil {
		return nil, fmt.Errorf("collect: %s: %w", s, err)
	}
	return &Store{c: c, opt: opt, settings: s}, nil
}

// Close closes the connection.
func (s *Store) Close() { s.c.Close() }

// String is the store's address, any password replaced by ***.
func (s *Store) String() string { return s.settings.String() }

// runIDPattern is what a run id may be: it goes into keys and file names.
var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// CheckRunID returns an error wrapping ErrBadInput if id is not a valid run id: 1 to 64
// letters, digits, '.', '_' or '-'.
func CheckRunID(id string) error {
	if !runIDPattern.MatchString(id) {
		return fmt.Errorf("%w: run id %q: want 1 to 64 letters, digits, '.', '_' or '-'", ErrBadInput, id)
	}
	return nil
}

// NewRunID returns a new run id: the time in UTC and 6 random bytes, e.g.
// 20261125T163000Z-3f9a0c12d4e1, so that ids sort by time and do not collide.
func NewRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}

func runKey(runID, suffix string) string { return keyPrefix + "{" + runID + "}:" + suffix }

// ChildArgs returns how a child process is told to use the store of opt: the address without
// its password (the process list shows command lines) and the environment that carries the
// password, EnvPassword=…, to add to the child's.
func ChildArgs(opt Options) (addr string, env []string, err error) {
	s, err := Settings(opt)
	if err != nil {
		return "", nil, err
	}
	for _, kv := range s.Env() {
		if v, ok := strings.CutPrefix(kv, conn.EnvPassword+"="); ok {
			env = append(env, EnvPassword+"="+v)
		}
	}
	return s.ChildAddrs()[0], env, nil
}
