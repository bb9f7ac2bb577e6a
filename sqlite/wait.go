package sqlite

import (
	"context"
	"time"

	"github.com/leasehold/lease/lock"
)

// AcquireWait acquires the lock name for executionID for d, as Acquire
// does, waiting while it is held, until ctx is done: it makes LockProvider a
// [lockprovider.Waiter].
//
// A waiter tries, and when the lock is held, waits for the first of: a
// commit through this provider (a Release wakes the waiters of this
// process at once), a commit of another process (seen a moment after it on
// Linux, the store being told of writes to the file, and otherwise by the
// poll of PRAGMA data_version, [WithPoll], a few milliseconds), or the end
// of the holder's lease on the provider's clock; then it tries again. A
// holder that dies is thus replaced within its lease plus a poll interval.
// Waiters are not queued: when a lock is freed every waiter for it, in any
// process, tries and one wins.
//
// When ctx is done first it returns ctx.Err(), and a lease acquired as ctx
// ended is released before returning.
func (p *LockProvider) AcquireWait(ctx context.Context, name, executionID string, d time.Duration) (*lock.Lease, error) {
	if err := lockChecks.Acquire(ctx, name, executionID, d); err != nil {
		return nil, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := p.open("acquire"); err != nil {
			return nil, err
		}
		// Listen before trying, so that no change after the attempt goes
		// unseen.
		changed, stop := p.d.watch.wait()
		l, ends, err := p.acquire(ctx, name, executionID, d)
		if err != nil {
			stop()
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			return nil, err
		}
		if l != nil {
			stop()
			if err := ctx.Err(); err != nil {
				_ = p.Release(context.WithoutCancel(ctx), []lock.Lease{*l})
				return nil, err
			}
			return l, nil
		}
		if p.onWait != nil {
			p.onWait(name)
		}
		// The holder's lease ends at ends, after the attempt's now. If the
		// clock has passed it since, try again at once: a clock that moves
		// only when told (a fake one) would not fire a timer armed for the
		// past until it moved again.
		left := time.Duration(ends - p.d.now())
		if left <= 0 {
			stop()
			continue
		}
		expired := make(chan struct{}, 1)
		fire := func() {
			select {
			case expired <- struct{}{}:
			default:
			}
		}
		timer := p.d.clock.AfterFunc(left, fire)
		if p.d.now() >= ends { // it passed while the timer was armed
			fire()
		}
		select {
		case <-changed:
		case <-expired:
		case <-ctx.Done():
		}
		timer.Stop()
		stop()
	}
}
