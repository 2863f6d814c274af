package lockcore

import "time"

// Waiters outside this Client: how long a hot lock's local queue holds back for them.
//
// A release through Redis PUBLISHes on the lock's unlock channel, and PUBLISH replies with the
// number of subscribers that received the message. A Redisson client waits subscribed to that
// channel, and so does a lockcore Client in another process, so a count above this Client's own
// subscription (waitTable.own) means somebody outside is waiting: the release leaves the lock
// free and the next local waiter holds back before its own attempt. The outside waiter needs one
// of its round trips (the message's way out, its attempt's way in) to take the lock, which this
// Client cannot know; so the hold-back starts at Options.HandoffYield and doubles, up to
// maxOutsideShift times, after each release heard outside whose hold-back still found the lock
// free (the outside waiter did not make it in time). A chain's end that nobody outside hears
// starts it over (not a pass: see settle).
//
// A hold-back also ends when the outside waiter has had its turn: this Client's subscription
// counts the unlock messages it receives (waitTable.heard), the release read the count before it
// was sent (cohort.relMark), and the second message after it (the release's own PUBLISH, then the
// other holder's) ends the hold-back at once (waitTable.holdBack), which then counts as a turn the
// outside waiter made, not one it missed. Without it, two lockcore Clients on one hot lock each
// waited out their own hold-back while the other had already come and gone: both doubled to the
// longest and the lock sat idle between turns.
//
// A Client whose goroutines wait for a lock held by another is itself a waiter outside every
// other Client: its cohort holds the lock's subscription from the first attempt that found the
// lock held by somebody else until the cohort goes idle (cohort.sub, Client.contended), not only
// while its one attempting goroutine waits in Redis. Otherwise another
// Client's passes through Redis go unheard while this one's goroutines wait in its local queue or
// in a hold-back, and that Client keeps the lock for whole HandoffWindows: against one 10 ms away,
// the near Client made 99% of the grants.
//
// A release nobody outside hears (the end of a chain, see chainOver) holds back only every
// pollerEvery, for pollerYieldChains chains' worth of HandoffWindow: a contender that polls
// without subscribing (a Redisson tryLock with no wait) cannot be seen, and still finds the lock
// free at least that long that often, while a hot lock with nobody outside pays no hold-back on
// nearly all of its chains (the 2 ms after each one was most of its p99).

// maxOutsideShift bounds the doubling of the hold-back for outside waiters: HandoffYield << 5,
// 64 ms by default, serves an outside waiter up to about 60 ms away.
const maxOutsideShift = 5

// pollerEvery is how often a chain's end holds back for pollers nobody can see.
const pollerEvery = time.Second

// pollerYieldChains is that hold-back, in HandoffWindows (60 ms by default, 6% of a hot lock's
// time where the 2 ms after every chain took 9%): a poller whose period is below it finds the
// lock free once every pollerEvery.
const pollerYieldChains = 3
