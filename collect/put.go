package collect

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/lockbench/lockbench/results"
	"github.com/redis/rueidis"
)

// meta describes one stored result; the merge reads it before the chunks.
type meta struct {
	Run    string `json:"run"`
	Index  int    `json:"index"`
	Procs  int    `json:"procs"`
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
	Chunks int    `json:"chunks"`
}

// Put stores f, the result file of process index of a run of procs processes, under runID, with
// the store's expiry. The chunks are written first and the entry that lists the result last, so
// a merge never sees a result half written. A second Put of the same index is stored beside the
// first, not over it: the merge then refuses both, naming the index.
func (s *Store) Put(ctx context.Context, runID string, index, procs int, f *results.File) error {
	if err := CheckRunID(runID); err != nil {
		return err
	}
	if index < 0 || index >= procs {
		return fmt.Errorf("%w: process %d of %d", ErrBadInput, index, procs)
	}
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("collect: encode result: %w", err)
	}
	sum := sha256.Sum256(data)
	nonce := make([]byte, 4)
	_, _ = rand.Read(nonce)
	entry := strconv.Itoa(index) + ":" + hex.EncodeToString(nonce)
	m := meta{Run: runID, Index: index, Procs: procs, Size: len(data), SHA256: hex.EncodeToString(sum[:])}
	m.Chunks = (len(data) + s.opt.ChunkSize - 1) / s.opt.ChunkSize
	hash := runKey(runID, "r:"+entry)
	ttl := s.opt.TTL.Milliseconds()
	cmds := make(rueidis.Commands, 0, m.Chunks+2)
	for i := range m.Chunks {
		chunk := data[i*s.opt.ChunkSize : min(len(data), (i+1)*s.opt.ChunkSize)]
		cmds = append(cmds, s.c.B().Hset().Key(hash).FieldValue().FieldValue(strconv.Itoa(i), rueidis.BinaryString(chunk)).Build())
	}
	mj, _ := json.Marshal(m) // plain fields: cannot fail
	cmds = append(cmds,
		s.c.B().Hset().Key(hash).FieldValue().FieldValue("meta", string(mj)).Build(),
		s.c.B().Pexpire().Key(hash).Milliseconds(ttl).Build())
	for i, r := range s.c.DoMulti(ctx, cmds...) {
		if err := r.Error(); err != nil {
			return fmt.Errorf("collect: storing process %d's result on %s (command %d of %d): %w", index, s, i+1, len(cmds), err)
		}
	}
	list := runKey(runID, "entries")
	for _, r := range s.c.DoMulti(ctx,
		s.c.B().Rpush().Key(list).Element(entry).Build(),
		s.c.B().Pexpire().Key(list).Milliseconds(ttl).Build()) {
		if err := r.Error(); err != nil {
			return fmt.Errorf("collect: listing process %d's result on %s: %w", index, s, err)
		}
	}
	return nil
}

// Delete removes every result stored under runID.
func (s *Store) Delete(ctx context.Context, runID string) error {
	if err := CheckRunID(runID); err != nil {
		return err
	}
	list := runKey(runID, "entries")
	entries, err := s.c.Do(ctx, s.c.B().Lrange().Key(list).Start(0).Stop(-1).Build()).AsStrSlice()
	if err != nil && !rueidis.IsRedisNil(err) {
		return fmt.Errorf("collect: %s: %w", s, err)
	}
	keys := []string{list}
	for _, e := range entries {
		keys = append(keys, runKey(runID, "r:"+e))
	}
	// One key at a time: the keys share a hash tag, but UNLINK of many is refused by a proxy
	// that splits by slot anyway, and these are few.
	for _, k := range keys {
		if err := s.c.Do(ctx, s.c.B().Unlink().Key(k).Build()).Error(); err != nil {
			return fmt.Errorf("collect: %s: %w", s, err)
		}
	}
	return nil
}
