//go:build race

package rawio

import "sync"

// ioSync tells the race detector what the kernel orders: a write to a pipe happens before a read
// that sees its bytes, as package syscall's Read and Write tell it (their race annotations),
// which raw system calls skip. Without it, a goroutine that acts on a line read from lockbench
// (a release) looked unordered with the one that wrote the line it answers (the grant), though
// the release could only be sent after the grant was read; and memory a lockcore lock guarded
// looked unordered between two clients (lockcore's raw connections call these too). Every write
// is ordered before every later read of the process, as syscall does; only race builds pay.
var ioSync sync.Mutex

// Released tells the race detector a write to a descriptor is made: call it before a raw
// write (File.Write does).
func Released() { ioSync.Lock(); ioSync.Unlock() } //nolint:staticcheck // an empty critical section is the point

// Acquired tells the race detector a read from a descriptor was made: call it after a raw
// read (File.Read does).
func Acquired() { ioSync.Lock(); ioSync.Unlock() } //nolint:staticcheck // as Released
