package kept

import (
	"context"
	"errors"
	"io"
)

// Serve is lockbench up once its signals are caught: it claims o.Name, starts the topology (ctx
// bounds the start), publishes its state, writes its summary to stdout, keeps it running until
// ctx ends, then stops it. It says what it does, and every error, on logf. abandon is handed
// Up.Abandon once the name is claimed: what a process that must quit at once calls (a second
// Ctrl-C). interrupted says the start failed because ctx ended.
func Serve(ctx context.Context, o UpOptions, stdout io.Writer, logf func(format string, a ...any), abandon func(func())) (interrupted bool, err error) {
	up, err := NewUp(o)
	if err != nil {
		if errors.Is(err, ErrRunning) {
			logf("%v: stop it with 'lockbench down --name %s' or choose another --name", err, o.Name)
		} else {
			logf("%v", err)
		}
		return false, err
	}
	defer up.Close()
	abandon(up.Abandon)

	logf("starting %s (%s provider)", o.Topology, o.Provider)
	if err := up.Start(ctx); err != nil {
		logf("%v", err)
		return ctx.Err() != nil, err
	}
	defer func() {
		logf("stopping %s", o.Topology)
		if err := up.Stop(); err != nil {
			logf("stop: %v", err)
			return
		}
		logf("stopped")
	}()

	st, err := up.Publish()
	if err != nil {
		logf("%v", err)
		return false, err
	}
	st.WriteSummary(stdout)
	logf("%s is up (pid %d): stop it with Ctrl-C or 'lockbench down --name %s'", o.Topology, st.Pid, o.Name)

	<-ctx.Done()
	return false, nil
}
