package main

import (
	"context"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

// localMutexDriver is a deliberately broken lock, registered in the test binary only: a
// sync.Mutex per name inside one process. It excludes the workers of its process, so the
// in-process checker finds nothing, and does not exclude across processes at all: the
// cross-process checker must catch it with --procs 2 or more.
type localMutexDriver struct{}

const localMutexName = "test-local-mutex"

func init() {
	drivers.Register(localMutexDriver{})
	crashIfAsked()
}

func (localMutexDriver) Name() string        { return localMutexName }
func (localMutexDriver) Kinds() drivers.Kind { return drivers.KindMutex }
func (localMutexDriver) Open(context.Context, drivers.Config) (drivers.Locker, error) {
	return &localMutexLocker{}, nil
}

type localMutexLocker struct{ m sync.Map } // name → *sync.Mutex

func (l *localMutexLocker) NewWorker() drivers.Worker   { return localMutexWorker{l} }
func (l *localMutexLocker) Settings() map[string]string { return map[string]string{"scope": "process"} }
func (l *localMutexLocker) Close() error                { return nil }
func (l *localMutexLocker) mutex(name string) *sync.Mutex {
	m, _ := l.m.LoadOrStore(name, new(sync.Mutex))
	return m.(*sync.Mutex)
}

type localMutexWorker struct{ l *localMutexLocker }

func (w localMutexWorker) Lock(ctx context.Context, name string) error {
	w.l.mutex(name).Lock()
	return nil
}

func (w localMutexWorker) Unlock(ctx context.Context, name string) error {
	w.l.mutex(name).Unlock()
	return nil
}

// crashEnv names the worker index that kills itself with SIGKILL crashDelay after it starts,
// mid-run: a real crash of one generator process, which cannot write anything.
const (
	crashEnv   = "LOCKBENCH_TEST_CRASH_INDEX"
	crashDelay = 3 * time.Second
)

func crashIfAsked() {
	idx := os.Getenv(crashEnv)
	if idx == "" || len(os.Args) < 2 || os.Args[1] != cmdWorker {
		return
	}
	if !strings.Contains(strings.Join(os.Args, " "), " --index "+idx+" ") {
		return
	}
	time.AfterFunc(crashDelay, func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) })
}
