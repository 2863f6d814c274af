// Package crosscheck keeps the safety checkers' state in a file that several lockbench
// processes on one machine map into memory (under /dev/shm when it exists), so that the checker
// of every process sees the holders of all of them without trusting the lock: each holder marks
// the per-key counter with an atomic add on entering its critical section and unmarks it on
// leaving, exactly as the in-process checker does (see workloads.Checker), and a counter above
// one is two holders at once, whichever processes they are in. Atomic operations on memory
// mapped MAP_SHARED are atomic across processes on every platform Go supports, because they are
// the same instructions on the same physical memory.
//
// It works on one machine only: processes on other machines (a Kubernetes Job's pods) cannot
// map the file, and each checks its own holders; see docs/procs.md, "Several processes and
// machines" for what that leaves unchecked.
package crosscheck

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"unsafe"

	"github.com/lockbench/lockbench/workloads"
)

// ErrBadArena is wrapped by Open's errors for a file that is not an arena of the asked size.
var ErrBadArena = errors.New("crosscheck: not a checker arena")

// magic starts every arena file, so Open refuses any other file.
var magic = [8]byte{'L', 'B', 'X', 'C', 'H', 'K', '1', 0}

// Layout: a 64-byte header (magic, keys, the shared violation count), then the per-key state:
// Checker's int32 holders, padded to 8 bytes, RWChecker's int64 states and FenceChecker's int64
// last tokens. The file is sized with ftruncate, so the pages no key touches cost no memory.
const (
	headerSize       = 64
	keysOffset       = 8
	violationsOffset = 16
)

// MaxKeys bounds the keys an arena holds (workloads.Config allows at most 10^7 keys).
const MaxKeys = 10_000_000

func size(keys int) int {
	occ := (keys*4 + 7) &^ 7
	return headerSize + occ + 2*keys*8
}

// Arena is one mapping of a checker arena file. Its Shared state is safe for concurrent use by
// any number of goroutines and processes; Close and Remove are not safe for concurrent use.
type Arena struct {
	path   string
	keys   int
	mem    []byte
	shared *workloads.Shared
}

// DefaultDir is where Create puts arenas when given no directory: /dev/shm (memory, never
// written to disk) when it is a directory, else the system's temporary directory.
func DefaultDir() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		return "/dev/shm"
	}
	return os.TempDir()
}

// Create makes a new, zeroed arena file for keys keys in dir (DefaultDir when empty) and maps
// it. The caller passes Path to the other processes, which Open it, and Removes it when they
// are done.
func Create(dir string, keys int) (*Arena, error) {
	if keys < 1 || keys > MaxKeys {
		return nil, fmt.Errorf("crosscheck: %d keys: want 1 to %d", keys, MaxKeys)
	}
	if dir == "" {
		dir = DefaultDir()
	}
	f, err := os.CreateTemp(dir, "lockbench-check-*.arena")
	if err != nil {
		return nil, fmt.Errorf("crosscheck: %w", err)
	}
	defer f.Close()
	var head [headerSize]byte
	copy(head[:], magic[:])
	binary.LittleEndian.PutUint64(head[keysOffset:], uint64(keys))
	_, err = f.Write(head[:])
	if err == nil {
		err = f.Truncate(int64(size(keys)))
	}
	if err != nil {
		os.Remove(f.Name())
		return nil, fmt.Errorf("crosscheck: %w", err)
	}
	a, err := mapFile(f, keys)
	if err != nil {
		os.Remove(f.Name())
		return nil, err
	}
	return a, nil
}

// Open maps the arena at path, which Create made for keys keys. A file that is not one, or is
// for another number of keys, gives an error wrapping ErrBadArena.
func Open(path string, keys int) (*Arena, error) {
	if keys < 1 || keys > MaxKeys {
		return nil, fmt.Errorf("crosscheck: %d keys: want 1 to %d", keys, MaxKeys)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("crosscheck: %w", err)
	}
	defer f.Close()
	var head [headerSize]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadArena, path, err)
	}
	if [8]byte(head[:8]) != magic {
		return nil, fmt.Errorf("%w: %s", ErrBadArena, path)
	}
	if k := binary.LittleEndian.Uint64(head[keysOffset:]); k != uint64(keys) {
		return nil, fmt.Errorf("%w: %s holds %d keys, want %d", ErrBadArena, path, k, keys)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != int64(size(keys)) {
		return nil, fmt.Errorf("%w: %s has the wrong size", ErrBadArena, path)
	}
	return mapFile(f, keys)
}

func mapFile(f *os.File, keys int) (*Arena, error) {
	mem, err := mmap(f, size(keys))
	if err != nil {
		return nil, fmt.Errorf("crosscheck: map %s: %w", f.Name(), err)
	}
	path, _ := filepath.Abs(f.Name())
	a := &Arena{path: path, keys: keys, mem: mem}
	occ := headerSize
	rw := occ + (keys*4+7)&^7
	tok := rw + keys*8
	// The mapping is page aligned and every offset is a multiple of the element's size, as
	// sync/atomic requires.
	a.shared = &workloads.Shared{
		Occupancy:  unsafe.Slice((*atomic.Int32)(unsafe.Pointer(&mem[occ])), keys),
		RW:         unsafe.Slice((*atomic.Int64)(unsafe.Pointer(&mem[rw])), keys),
		Tokens:     unsafe.Slice((*atomic.Int64)(unsafe.Pointer(&mem[tok])), keys),
		Violations: (*atomic.Int64)(unsafe.Pointer(&mem[violationsOffset])),
	}
	return a, nil
}

// Path is the arena file's absolute path, for the other processes' Open.
func (a *Arena) Path() string { return a.path }

// Keys is the number of keys the arena holds.
func (a *Arena) Keys() int { return a.keys }

// Shared is the checkers' state in the mapping, for workloads.Config.Shared. It is valid until
// Close.
func (a *Arena) Shared() *workloads.Shared { return a.shared }

// Violations is the violations every process that mapped the arena has counted so far.
func (a *Arena) Violations() int64 { return a.shared.Violations.Load() }

// Close unmaps the arena; the file stays for the other processes. Shared must not be used after.
func (a *Arena) Close() error {
	if a.mem == nil {
		return nil
	}
	err := munmap(a.mem)
	a.mem, a.shared = nil, nil
	return err
}

// Remove unmaps the arena and deletes its file.
func (a *Arena) Remove() error {
	return errors.Join(a.Close(), os.Remove(a.path))
}
