// Package lockcore is a Redis lock engine that speaks Redisson's lock protocol, built on rueidis:
// reentrant, fair, fenced and read-write locks, multi-locks and RedLock, with lease renewal by a
// watchdog and pub/sub wake-ups. It is a library on its own; lockbench benchmarks it.
//
// # Redisson compatibility
//
// A Go service using lockcore and a Java service using Redisson exclude each other on the same
// lock name: the lock is a hash at key name whose field "<client id>:<owner id>" holds the
// reentrancy count, the key carries a PEXPIRE lease, and a full release PUBLISHes "0" on
// "redisson_lock__channel:{name}". Every kind below follows the Redisson protocol of the same
// name (keys, fields, channels, messages and return values), so Redisson clients interoperate.
//
// # Getting started
//
// Make one Client per process and share it between goroutines (it is safe for concurrent use,
// and its goroutines share subscriptions, renewals and round trips); give each logical holder
// an Owner; take locks by name:
//
//	c, err := lockcore.New(lockcore.Options{Redis: rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}}})
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//	owner := c.NewOwner()
//	m := c.Mutex("orders:42")
//	if err := m.Lock(ctx, owner); err != nil {
//		return err
//	}
//	defer m.Unlock(ctx, owner)
//
// The examples (Example, ExampleMutex_reentrant, ExampleFairMutex, …) run as tests against
// redis-servers the test binary starts.
//
// # Configuration
//
// Configuration has one shape throughout: a constructor with something to set takes an options
// struct, and the zero value of every field means its default, an exported constant. New takes
// Options (lease, watchdog, pub/sub, batching and hand-over bounds, for every lock of the
// Client); Client.FairMutex takes FairMutexOptions (the waiters' wait time), NewRedLock takes
// RedLockOptions (node timeout, retry delay) and NewMultiLock takes MultiLockOptions (step
// wait). Mutex, FencedMutex and RWMutex have nothing of their own to set and take only a name:
//
//	fair := c.FairMutex("queue:jobs", lockcore.FairMutexOptions{WaitTime: 10 * time.Second})
//	both := lockcore.NewMultiLock([]lockcore.Locker{c.Mutex("a"), c.Mutex("b")}, lockcore.MultiLockOptions{})
//
// # Owners
//
// Go has no thread ids, so callers hold an explicit Owner (Client.NewOwner), which plays the
// role of Redisson's thread id: a lock is held by an Owner, taking it again with the same Owner
// counts up (reentrancy), and only that Owner can release it. Owners are values; copies are the
// same owner. One Owner must not take or release locks from two goroutines at once: give each
// goroutine its own. Client.OwnerWithID makes the field a Redisson client with the same id
// would write for a given thread id.
//
// # Leases and the watchdog
//
// A lock taken without a lease (Lock, or TryLock with lease 0) gets Options.LeaseTime
// (DefaultLeaseTime, 30 s) and is renewed every Options.RenewInterval (LeaseTime/3) while held,
// so a live holder keeps it and a crashed one loses it within a lease. A lock taken with an
// explicit lease (LockLease, or TryLock with a positive lease) is not renewed: it expires after
// the lease unless released before. Redis keeps leases in whole milliseconds: every kind
// refuses an explicit lease under 1 ms with ErrShortLease before sending anything, and rounds a
// fraction of a millisecond up, never down (as it does Options.LeaseTime and the fair lock's
// wait time). A lease of a few milliseconds is legal but may not be granted: a grant whose reply
// comes back when less than the drift allowance (lease/100 + 2 ms) of it is left is given up.
// Renewals check ownership first, and all renewals of one Client go out as one batch per tick.
//
// # Waiting
//
// Lock blocks until the lock is taken or ctx ends. TryLock(ctx, owner, wait, lease) waits up to
// wait (0: one attempt) and reports whether it got the lock; running out of wait is a result,
// not an error. Waiters subscribe to the lock's unlock channel and also retry after the lock's
// remaining TTL, so a lost message costs at most one TTL.
//
// # Lock kinds
//
//   - Mutex: the reentrant lock (RLock).
//   - FairMutex: grants in arrival order (RedissonFairLock): a queue redisson_lock_queue:{name},
//     waiter deadlines in redisson_lock_timeout:{name}, one wake-up channel per waiter.
//   - FencedMutex: every grant returns a token from redisson_lock_token:{name}, greater than all
//     earlier ones (RFencedLock); the counter is kept, without TTL, so tokens never restart.
//   - RWMutex: readers share, a writer excludes (RReadWriteLock); per-hold read expiry keys; a
//     write release wakes every waiting reader (message "1").
//   - MultiLock: all or nothing over any Lockers, in any cluster slots, without deadlock between
//     overlapping sets (NewMultiLock).
//   - RedLock: quorum N/2+1 over independent masters, one Client each (NewRedLock), validity =
//     lease − elapsed − drift.
//
// # Errors
//
// Errors are values checked with errors.Is: ErrNotOwner (an Unlock by an owner that does not
// hold the lock: never held, or its lease ran out; never a silent success), ErrNoOwner (a zero
// Owner), ErrClosed (the Client was closed, also while waiting). A wait cut short by its
// context returns the context's error. Other errors are Redis's or the network's. RedLock and
// MultiLock, which span deployments, name the one that failed: their errors join a *NodeError
// (Node: the address, never credentials) per failed deployment, found with errors.As, whose
// cause errors.Is still sees (ErrNotOwner, ErrNodeTimeout, a context's error, ErrNoQuorum
// around them all when a RedLock attempt lacked a quorum). ErrNotSynced (a *SyncError) says the
// master's replicas did not acknowledge a call in synced mode: a lock attempt so answered was
// undone and is no grant (see Replicas).
//
// # Topologies
//
// A Client works on a single server, a sentinel deployment or a cluster, as its rueidis client
// connects. On a Redis 7 cluster, unlock messages use sharded pub/sub (SPUBLISH/SSUBSCRIBE), as
// Redisson 3.22+ does; every helper key and channel shares the lock's hash tag. Options.PubSub
// overrides the detection.
//
// # Replicas
//
// A grant the replicas never received is lost when a replica is promoted. On a master with
// connected replicas (a sentinel deployment, a cluster with replicas) every lock, unlock and
// renewal is therefore confirmed only once the replicas acknowledge it, as Redisson 3.21+ does
// (checkLockSyncedSlaves), but with one WAIT per pipeline of scripts (a batch of many
// goroutines' operations, a watchdog tick) rather than one per script. A shortfall undoes the
// grant and fails the call with ErrNotSynced; a renewal so answered counts as failed. Options.Sync
// chooses WAIT, WAITAOF or nothing (SyncOff); Client.Sync reports what a key's master waits for.
// On a cluster a synced script and its WAIT always go together to one node, on one connection:
// lockcore follows MOVED and ASK itself, so a stale slot map can never have a script run on one
// master and its WAIT answered by another's replicas.
//
// # Performance
//
// What makes it fast:
//   - every script runs by EVALSHA; the body is sent only after the server answers NOSCRIPT;
//   - no mutex is held around I/O, so concurrent callers' commands share round trips through
//     rueidis' auto-pipelining;
//   - all goroutines of one Client waiting on one lock share one subscription, and a release wakes
//     one of them instead of a herd;
//   - on a hot Mutex, goroutines of one Client queue locally with one attempt in flight, and a
//     release hands the lock to the next local waiter inside the process, with no round trip,
//     within bounds that let other processes in (see Lock cohorting below);
//   - Mutex lock attempts and releases are auto-batched: an operation that finds no batch
//     gathering yields the processor once, so that the goroutines already runnable issue theirs,
//     then sends everything queued as script calls of up to Options.MaxBatch operations (two
//     calls at least for 16 or more, so that the client works on the replies of one while Redis
//     runs the other), each with its own script's exact Redis effects and reply; on a Redis 7
//     cluster one batch carries locks of every slot of one master (allow-cross-slot-keys, one
//     WAIT per batch in synced mode; per hash slot on a server that refuses it), and what a
//     master did not run goes again by the routed path (see cluster.go); an operation alone
//     goes out as its own script (see batch.go);
//   - watchdog renewals of every held lock go out as one batch per tick, not one timer per lock.
//
// All kinds share one waiting loop, one script cache and one watchdog.
//
// lockbench measures what each of these buys by switching it off and counting (batches,
// hand-overs, passes, yields, renewals) through hooks internal to the lockbench module, which
// are no part of this API.
//
// # Lock cohorting
//
// Goroutines of one Client that want the same Mutex queue locally in arrival
// order; one of them attempts in Redis at a time, and a releaser that asks again queues behind
// them instead of barging. A release with a local waiter hands the lock over inside the process
// while the lease last confirmed by Redis is safely ahead (half of a watchdog lease, or the next
// owner's whole explicit lease, after a drift allowance): a renewal that failed or got no reply
// confirms nothing, so a Client cut off from Redis stops handing over before its key can expire.
// Otherwise the release goes through Redis, and in the same script call grants the next local
// waiter if nobody else is subscribed to the unlock channel (a pass). Hand-overs and passes form
// a chain, bounded by Options.HandoffLimit grants and Options.HandoffWindow (at most a quarter of
// the lease) since the lock was last free in Redis; the release that ends a chain, or that
// others were subscribed to hear, leaves the lock free (DEL and PUBLISH, as Redisson's unlock).
// PUBLISH's reply says whether anyone outside the Client heard it: if so the next local waiter
// holds back Options.HandoffYield, doubled (up to 32 times) after each release whose hold-back
// still found the lock free, so that a remote waiter woken by the message gets its turn however
// far away it is (up to about 60 ms); if not, it attempts at once, except once a second, when it
// holds back three HandoffWindows for pollers that never subscribe. A hold-back ends early once
// another client has taken the lock and released it. Once a Client's attempt has found a lock
// held by another, it stays subscribed to its channel while its goroutines ask for it, so that another lockcore Client hears it
// waiting: two processes on one hot lock take turns of about HandoffLimit grants each, whatever
// the round trip between them. HandoffLimit < 0 is strict mode:
// every release goes through Redis.
//
// # Calls of unknown outcome
//
// A call whose reply is lost may or may not have run, and may still
// run later. lockcore never assumes either: the hash field it used is retired (its owner's next
// holds of the lock use a new field, so nothing sent before can undo them), and a resolver
// clears it in Redis (publishing the release if that frees the lock) as soon as Redis answers
// again. A lock left by a lost reply is free within moments of the network
// healing, not after its lease, and Redis never counts a hold that nobody has. See doubt.go.
//
// Which lock kinds cohort, and why:
//   - Mutex: yes, as above.
//   - FairMutex: no; its grants follow the queue in Redis, which includes other processes, and a
//     local hand-over would skip it.
//   - FencedMutex: no; every grant must take a token from Redis, so a hand-over would save
//     nothing and a grant without a token is not fenced.
//   - RWMutex: no; readers share, and a write release wakes every reader, so there is no single
//     next holder to hand to.
//   - MultiLock: through its parts; a MultiLock over Mutexes takes each part by Mutex.TryLock, so
//     each part queues and hands over like any Mutex, and the deadlock avoidance (one canonical
//     order, a bounded wait per step) is unchanged.
//   - RedLock: no; every grant needs a quorum of independent masters, which a local hand-over on
//     one master would bypass.
//
// # Owners inside a Client
//
// The Client remembers each lock it holds in a local table
// that maps the lock name to the current local Owner and, separately, to the hash field written in
// Redis. Keeping the two apart is deliberate: a later step (lock cohorting) can pass a held lock
// from one local Owner to another by changing the table entry alone, with no Redis round trip,
// while the field in Redis stays that of the process.
package lockcore
