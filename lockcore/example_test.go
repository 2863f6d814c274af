package lockcore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/lockcore"
	"github.com/redis/rueidis"
)

// Example shows the usual life of a lock. It is compiled, not run: it needs a Redis at the
// address (the package's tests start their own).
func Example() {
	c, err := lockcore.New(lockcore.Options{Redis: rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	ctx := context.Background()

	owner := c.NewOwner() // one per logical holder, like a thread id in Redisson
	m := c.Mutex("orders:42")
	if err := m.Lock(ctx, owner); err != nil { // 30 s lease, renewed while held
		fmt.Println(err)
		return
	}
	defer m.Unlock(ctx, owner)

	// Elsewhere: give up after 100 ms, and let the lock expire after 5 s if never released.
	other := c.NewOwner()
	if ok, err := m.TryLock(ctx, other, 100*time.Millisecond, 5*time.Second); err == nil && !ok {
		fmt.Println("busy")
	}
}
