package lockcore

import "github.com/lockbench/lockbench/internal/lockhooks"

// lockbench's benchmark hooks (knobs that switch optimisations off, counters, the referee's
// view of a hold) are reached through internal/lockhooks rather than exported here, so that a
// service using lockcore sees only what it needs; registering them costs nothing at run time.
func init() {
	lockhooks.Register(lockhooks.Hooks{
		SetKnobs:  func(opt any, k lockhooks.Knobs) { opt.(*Options).knobs = k },
		Stats:     func(c any) lockhooks.Stats { return c.(*Client).snapshot() },
		Renewals:  func(c any) int64 { return c.(*Client).renewalCount() },
		HoldField: func(m, owner any) (string, bool) { return m.(*Mutex).holdField(owner.(Owner)) },
	})
}
