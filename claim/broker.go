package claim

import (
	"sync"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim/claimstore"
	"github.com/leasehold/lease/internal/optcore"
	"github.com/leasehold/lease/internal/sharedopt"
)

// Broker is the policy half of a work queue over a Store, the storage half:
// it checks arguments, fills defaults, computes backoff and decides when a
// failed item is dead, and runs handlers with heartbeats (Work). Create one
// with New.
//
// A Broker is safe for concurrent use by multiple goroutines. It never
// calls its store while holding a lock of its own, so a store may call a
// claim's Lost function with its lock held.
type Broker struct {
	store Store
	clock lease.Clock // Work's heartbeats and timers
	opts  options

	mu     sync.Mutex
	closed bool
	runs   map[*run]struct{} // Work calls under way
	done   chan struct{}     // closed by Close, for loops such as RunCleaner
}

// New returns a Broker over store, which it owns from then on: Close
// closes it. Work runs its heartbeats and timers on the store's clock if
// the store is a claimstore.TimeBase (Memory is), else
// on the clock of lease.WithClock, else on lease.SystemClock; New refuses
// lease.WithClock for a store with a clock of its own. A nil store or a
// bad option (see Option) gets a *lease.Error with Code
// lease.CodeInvalidArgument naming it, and no Broker; the store is then
// not closed, since the Broker never owned it. Use lease.Must for a
// configuration fixed in the source.
func New(store Store, opts ...Option) (*Broker, error) {
	if store == nil {
		return nil, invalid("New", "store", "must not be nil")
	}
	o := defaultOptions()
	if r := optcore.Apply(&sharedopt.Target{Shared: &o.shared, Own: &o}, opts, Option.ApplyClaim); r != nil {
		return nil, invalid("New", r.Option, r.Detail)
	}
	o.report = sharedopt.Reporter(&o.shared)
	clock := lease.SystemClock()
	if c, ok := store.(claimstore.TimeBase); ok {
		if o.shared.HasClock {
			return nil, invalid("New", "WithClock", "the store has its own clock (it is a claimstore.TimeBase, as Memory is), which the Broker reads; a second clock would disagree with it")
		}
		clock = c.Clock()
	} else if o.shared.HasClock {
		clock = o.shared.Clock
	}
	return &Broker{store: store, clock: clock, opts: o, runs: make(map[*run]struct{}), done: make(chan struct{})}, nil
}

// Close stops the Broker and closes its store. When it returns, nothing of
// the Broker runs any more: every heartbeat and timer of Work is stopped,
// the context of every running Work handler is cancelled with a cause
// matching lease.ErrClosed, no further claim is handed to a handler, and
// the store is closed. Work returns once its handlers have; later calls
// fail with an error matching lease.ErrClosed. Close is idempotent and
// returns the store's Close error.
func (b *Broker) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	close(b.done)
	runs := make([]*run, 0, len(b.runs))
	for r := range b.runs {
		runs = append(runs, r)
	}
	b.mu.Unlock()
	cause := closedError("work")
	for _, r := range runs {
		r.close(cause)
	}
	return b.store.Close()
}
