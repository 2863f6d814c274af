package collect

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/results"
	"github.com/redis/rueidis"
)

// Stored is one result as listed under a run, before its chunks are read. It is a plain value.
type Stored struct {
	// Index is the process the result is of, Procs how many processes its run has.
	Index, Procs int
	// Size is the result file's length in bytes.
	Size  int
	entry string
	meta  meta
}

// List returns the results stored under runID, by index, reading only their descriptions.
// It does not check them against each other (see Check).
func (s *Store) List(ctx context.Context, runID string) ([]Stored, error) {
	if err := CheckRunID(runID); err != nil {
		return nil, err
	}
	entries, err := s.c.Do(ctx, s.c.B().Lrange().Key(runKey(runID, "entries")).Start(0).Stop(-1).Build()).AsStrSlice()
	if err != nil && !rueidis.IsRedisNil(err) {
		return nil, fmt.Errorf("collect: %s: %w", s, err)
	}
	out := make([]Stored, 0, len(entries))
	for _, e := range entries {
		idxText, _, _ := strings.Cut(e, ":")
		idx, err := strconv.Atoi(idxText)
		if err != nil {
			return nil, fmt.Errorf("%w: run %s lists %q, not a result of lockbench worker", ErrForeign, runID, e)
		}
		mj, err := s.c.Do(ctx, s.c.B().Hget().Key(runKey(runID, "r:"+e)).Field("meta").Build()).ToString()
		if rueidis.IsRedisNil(err) {
			return nil, fmt.Errorf("%w: process %d's result is listed but gone (expired or deleted)", ErrCorrupt, idx)
		}
		if err != nil {
			return nil, fmt.Errorf("collect: %s: %w", s, err)
		}
		var m meta
		if err := json.Unmarshal([]byte(mj), &m); err != nil {
			return nil, fmt.Errorf("%w: process %d's description: %v", ErrCorrupt, idx, err)
		}
		if m.Run != runID || m.Index != idx {
			return nil, fmt.Errorf("%w: the result listed as process %d of run %s says it is process %d of run %q", ErrForeign, idx, runID, m.Index, m.Run)
		}
		out = append(out, Stored{Index: idx, Procs: m.Procs, Size: m.Size, entry: e, meta: m})
	}
	slices.SortStableFunc(out, func(a, b Stored) int { return a.Index - b.Index })
	return out, nil
}

// Check verifies that stored holds the results of exactly the procs processes of one run (procs
// 0: as many as the first result says): a result of another process count or an index outside
// the run wraps ErrForeign, an index stored twice ErrDuplicate, each naming the process. It
// returns the indexes with no result; the caller decides whether that is an error (ErrMissing).
func Check(stored []Stored, procs int) (missing []int, err error) {
	if procs <= 0 && len(stored) > 0 {
		procs = stored[0].Procs
	}
	seen := make(map[int]bool, len(stored))
	for _, st := range stored {
		switch {
		case st.Procs != procs:
			return nil, fmt.Errorf("%w: process %d was one of %d processes, not of %d", ErrForeign, st.Index, st.Procs, procs)
		case st.Index < 0 || st.Index >= procs:
			return nil, fmt.Errorf("%w: process %d is outside a run of %d (0 to %d)", ErrForeign, st.Index, procs, procs-1)
		case seen[st.Index]:
			return nil, fmt.Errorf("%w: process %d stored a result twice (two workers given --index %d?)", ErrDuplicate, st.Index, st.Index)
		}
		seen[st.Index] = true
	}
	for i := range procs {
		if !seen[i] {
			missing = append(missing, i)
		}
	}
	return missing, nil
}

// Get reads one stored result, checks its size and checksum, and decodes it.
func (s *Store) Get(ctx context.Context, runID string, st Stored) (*results.File, error) {
	hash := runKey(runID, "r:"+st.entry)
	var buf bytes.Buffer
	buf.Grow(st.meta.Size)
	h := sha256.New()
	for i := range st.meta.Chunks {
		b, err := s.c.Do(ctx, s.c.B().Hget().Key(hash).Field(strconv.Itoa(i)).Build()).AsBytes()
		if rueidis.IsRedisNil(err) {
			return nil, fmt.Errorf("%w: process %d's result lacks chunk %d of %d", ErrCorrupt, st.Index, i+1, st.meta.Chunks)
		}
		if err != nil {
			return nil, fmt.Errorf("collect: %s: %w", s, err)
		}
		buf.Write(b)
		h.Write(b)
	}
	if buf.Len() != st.meta.Size || hex.EncodeToString(h.Sum(nil)) != st.meta.SHA256 {
		return nil, fmt.Errorf("%w: process %d's result: %d bytes, checksum %s; stored as %d bytes, %s", ErrCorrupt, st.Index, buf.Len(), hex.EncodeToString(h.Sum(nil))[:12], st.meta.Size, st.meta.SHA256[:min(12, len(st.meta.SHA256))])
	}
	f, err := results.Decode(&buf)
	if err != nil {
		return nil, fmt.Errorf("%w: process %d: %w", ErrCorrupt, st.Index, err)
	}
	for _, r := range f.Runs {
		if r.Fleet == nil || r.Fleet.RunID != runID {
			got := ""
			if r.Fleet != nil {
				got = r.Fleet.RunID
			}
			return nil, fmt.Errorf("%w: process %d's result is of run %q, not %s", ErrForeign, st.Index, got, runID)
		}
	}
	return f, nil
}

// Merge fetches the results of run runID one at a time and adds each to g as it comes, so that
// memory holds one result however many processes the run has. It first checks the listing (see
// Check; procs 0: as many as the results say): foreign or duplicate results fail before any is
// fetched. Missing processes are not an error here: it returns their indexes, and the merged
// file lists them as lost. A result that does not match the others (another configuration,
// version or image) gives g's error, naming the process and the field.
func (s *Store) Merge(ctx context.Context, runID string, procs int, g *results.FileMerger) (missing []int, err error) {
	stored, err := s.List(ctx, runID)
	if err != nil {
		return nil, err
	}
	if len(stored) == 0 {
		return nil, fmt.Errorf("%w: no result of run %s on %s (expired after the store's TTL, another run id, or another database?)", ErrMissing, runID, s)
	}
	missing, err = Check(stored, procs)
	if err != nil {
		return nil, err
	}
	for _, st := range stored {
		f, err := s.Get(ctx, runID, st)
		if err != nil {
			return nil, err
		}
		if err := g.Add(f); err != nil {
			return nil, fmt.Errorf("process %d: %w", st.Index, err)
		}
	}
	return missing, nil
}

// Fetch connects to opt.Addr and merges the results of run runID, which must be exactly procs
// processes' (0: as many as the results say), into one file stamped with version and args (see
// Store.Merge and results.FileMerger). When processes are missing it returns the file merged
// from the others, marked incomplete with the missing ones lost, and an error wrapping
// ErrMissing that names them; any other error returns no file.
func Fetch(ctx context.Context, opt Options, runID string, procs int, version string, args []string) (*results.File, error) {
	s, err := Open(ctx, opt)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	g := results.NewFileMerger(version, args)
	missing, err := s.Merge(ctx, runID, procs, g)
	if err != nil {
		return nil, err
	}
	f, err := g.File()
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		return f, MissingError(runID, missing, procs)
	}
	return f, nil
}

// MissingError returns the error wrapping ErrMissing that names the processes of run runID
// with no result.
func MissingError(runID string, missing []int, procs int) error {
	idx := make([]string, len(missing))
	for i, m := range missing {
		idx[i] = strconv.Itoa(m)
	}
	return fmt.Errorf("%w: run %s: no result from process %s of %d", ErrMissing, runID, strings.Join(idx, ", "), procs)
}

// Remove connects to opt.Addr and deletes every result stored under runID (see Store.Delete):
// for a caller that has merged them into its own file, so that a store that is also the
// deployment under test is left clean.
func Remove(ctx context.Context, opt Options, runID string) error {
	s, err := Open(ctx, opt)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Delete(ctx, runID)
}

// BadInput reports whether err, from Fetch, is the caller's input rather than the store's
// failing: an address or credentials the store refuses, or results that are not exactly one
// run's (another run's, a process stored twice, damaged, of a different configuration). A
// store that did not answer is not.
func BadInput(err error) bool {
	for _, e := range []error{ErrBadInput, ErrForeign, ErrDuplicate, ErrCorrupt,
		results.ErrFleetMismatch, conn.ErrAuth, conn.ErrTLS, conn.ErrPermission, conn.ErrNotRedis} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
