package election

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/callback"
)

// Callbacks are what Run calls as the election goes. Each may be nil. They run with no lock of
// the Election held and may call back into it; a callback that panics is
// recovered and reported to the panic handler (lease.WithPanicHandler), and Run
// goes on as if it had returned. Callbacks is a plain value.
type Callbacks struct {
	// OnStartedLeading runs, on a goroutine of its own, when the candidate
	// starts leading. ld is the leadership: its Token is the fencing token
	// to hand the resources the leader writes, and ctx is its Context,
	// which ends when the leadership does. It should return once ctx is
	// done: Run waits for it before calling OnStoppedLeading and
	// campaigning again. It may call ld.Resign to step down, after which
	// Run campaigns again.
	OnStartedLeading func(ctx context.Context, ld *Leadership)
	// OnStoppedLeading runs, on Run's goroutine, when a leadership is over:
	// OnStartedLeading has returned and the lock has been released, or
	// could not be within the retry interval (the provider did not answer)
	// and will expire. A leadership lost because no renewal confirmed it
	// in time thus ends with OnStoppedLeading at most the retry interval
	// after its safety deadline, however long the provider stays silent.
	OnStoppedLeading func()
	// OnNewLeader runs, on a goroutine of Run's, for the leader when Run
	// starts, if there is one, and for each new leader it sees (Observe),
	// this candidate included, in order. A leader it is slow to handle may
	// make it miss the ones in between, never report them out of order.
	OnNewLeader func(l Leader)
}

// Run takes part in the election with value attached until ctx is done:
// it campaigns; when it leads it calls OnStartedLeading and keeps leading
// until the leadership is lost or ctx is done; it then releases the lock,
// calls OnStoppedLeading, and, unless ctx is done, campaigns again. A
// campaign that fails (the provider is unreachable) is tried again after
// the retry interval (WithRetryInterval). Throughout, OnNewLeader hears of
// every new leader.
//
// Run returns ctx.Err() once ctx is done and every callback it started has
// returned: nothing runs after it returns. Cancelling ctx while leading
// releases the lock at once, so another candidate takes over without
// waiting for the lease to expire. That release, like every call made on
// the way out of a leadership, is given at most the retry interval (see
// Leadership.Resign): a leading Run whose provider stopped answering
// returns that long after ctx is done, at the latest, and a waiting one as
// soon as the provider's AcquireWait gives up, provided the provider's
// calls return once their context is done. Bad input (a nil ctx, a value longer
// than MaxCandidateValueSize) is refused at once with a *lease.Error naming it.
func (e *Election) Run(ctx context.Context, value []byte, cb Callbacks) error {
	if ctx == nil {
		return invalid("run", "ctx", "must not be nil")
	}
	if len(value) > MaxCandidateValueSize {
		_, err := e.Campaign(ctx, value) // the one place that words the error
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	octx, stopObserving := context.WithCancel(ctx)
	defer stopObserving()
	if cb.OnNewLeader != nil {
		ch, err := e.Observe(octx)
		if err != nil {
			return err
		}
		wg.Go(func() {
			for l := range ch {
				callback.Call("on new leader", e.reportPanic, func() { cb.OnNewLeader(l) })
			}
		})
	}
	for ctx.Err() == nil {
		ld, err := e.Campaign(ctx, value)
		switch {
		case ld != nil:
			e.serve(ld, cb)
		case errors.Is(err, lease.ErrInvalidArgument):
			return err
		case ctx.Err() == nil:
			e.pause(ctx, e.opts.retry)
		}
	}
	return ctx.Err()
}

// serve runs the callbacks of one leadership, and returns once it is over
// and they have returned.
func (e *Election) serve(ld *Leadership, cb Callbacks) {
	started := make(chan struct{})
	if cb.OnStartedLeading != nil {
		go func() {
			defer close(started)
			callback.Call("on started leading", e.reportPanic, func() { cb.OnStartedLeading(ld.Context(), ld) })
		}()
	} else {
		close(started)
	}
	<-ld.Context().Done()
	// The leadership's end has already begun releasing the lock: wait for
	// it (bounded: bound.go), then for OnStartedLeading.
	_ = ld.Resign(context.Background())
	<-started
	if cb.OnStoppedLeading != nil {
		callback.Call("on stopped leading", e.reportPanic, cb.OnStoppedLeading)
	}
}

// pause waits d on the Election's clock, or until ctx is done.
func (e *Election) pause(ctx context.Context, d time.Duration) {
	ch := make(chan struct{})
	t := e.opts.clock.AfterFunc(d, func() { close(ch) })
	select {
	case <-ch:
	case <-ctx.Done():
		t.Stop()
	}
}
