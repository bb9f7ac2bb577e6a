package locktest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/suite"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// testValueBadInput: AcquireValue refuses a value longer than MaxValueSize
// (and takes nothing), and takes one of MaxValueSize.
func testValueBadInput(e *env, va lockprovider.ValueAcquirer) {
	l, err := va.AcquireValue(e.ctx, name(0), "a", e.d, make([]byte, lock.MaxValueSize+1))
	assert.ErrorIs(e, err, lease.ErrInvalidArgument, "AcquireValue with a value over MaxValueSize")
	assert.Nil(e, l)
	got, err := va.AcquireValue(e.ctx, name(0), "a", e.d, make([]byte, lock.MaxValueSize))
	require.NoError(e, err, "AcquireValue with a value of MaxValueSize")
	require.NotNil(e, got, "the refused call took nothing: the lock is free")
	e.release(*got)
}

// testValueWaitHandOff: AcquireWaitValue refuses a value longer than
// MaxValueSize, and a waiter with a value gets the lock once it is freed,
// with the value attached (as an Inspector reports it).
func testValueWaitHandOff(e *env, vw lockprovider.ValueWaiter) {
	l, err := vw.AcquireWaitValue(e.ctx, name(0), "b", e.d, make([]byte, lock.MaxValueSize+1))
	assert.ErrorIs(e, err, lease.ErrInvalidArgument, "AcquireWaitValue with a value over MaxValueSize")
	assert.Nil(e, l)

	a := e.acquire(name(0), "a", e.d)
	value := []byte("b's address")
	ch := make(chan waitResult, 1)
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		l, err := vw.AcquireWaitValue(ctx, name(0), "b", e.d, value)
		ch <- waitResult{l, err}
	}()
	e.Cleanup(func() {
		cancel()
		<-done
	})
	e.stillWaiting(ch, "before the release")
	e.release(a)
	b := e.handedOff(ch, name(0), "b")
	assert.Greater(e, b.Token, a.Token, "hand-off token")
	if in, ok := e.p.(lockprovider.Inspector); ok {
		h, held, err := in.Holder(e.ctx, name(0))
		require.NoError(e, err)
		require.True(e, held, "the waiter holds the lock")
		assert.Equal(e, value, h.Value, "the waiter's value is attached to its holding")
	}
	e.release(b)
}

// waiters returns the execution IDs Waiting lists for name.
func (e *env) waiters(wi lockprovider.WaitInspector, name string, limit int) []string {
	e.Helper()
	ws, err := wi.Waiting(e.ctx, name, limit)
	require.NoError(e, err, "Waiting(%q, %d)", name, limit)
	var ids []string
	for _, w := range ws {
		ids = append(ids, w.ExecutionID)
	}
	return ids
}

// listed waits, up to handOffLimit, until Waiting lists want for name.
func (e *env) listed(wi lockprovider.WaitInspector, name string, want []string, what string) {
	e.Helper()
	// The condition may still run after Eventually gave up (it runs on a
	// goroutine of its own), so it reports through mu, never through e.
	var mu sync.Mutex
	var got []string
	var err error
	ok := assert.Eventually(e, func() bool {
		ws, werr := wi.Waiting(e.ctx, name, 0)
		ids := make([]string, 0, len(ws))
		for _, w := range ws {
			ids = append(ids, w.ExecutionID)
		}
		mu.Lock()
		defer mu.Unlock()
		got, err = ids, werr
		return werr == nil && slices.Equal(ids, want)
	}, handOffLimit, time.Millisecond)
	if !ok {
		mu.Lock()
		defer mu.Unlock()
		e.Fatalf("%s: Waiting(%q) lists %v (error %v), want %v", what, name, got, err, want)
	}
}

// testWaitingLists: the callers of AcquireWait on a held lock are listed
// by Waiting (not its holder, not a free lock's), up to its limit, and no
// longer once they got the lock or their context ended.
func testWaitingLists(e *env, wi lockprovider.WaitInspector) {
	w, ok := e.p.(lockprovider.Waiter)
	if !ok {
		e.Fatalf("locktest: %T is a lockprovider.WaitInspector but not a lockprovider.Waiter: it has no waiters to list", e.p)
	}
	assert.Empty(e, e.waiters(wi, name(0), 0), "a free lock has no waiters")
	a := e.acquire(name(0), "a", e.d)
	assert.Empty(e, e.waiters(wi, name(0), 0), "the holder is not waiting")
	bctx, cancelB := context.WithCancel(e.ctx)
	b := e.wait(bctx, w, name(0), "b")
	e.listed(wi, name(0), []string{"b"}, "one waiter")
	c := e.wait(e.ctx, w, name(0), "c")
	e.listed(wi, name(0), []string{"b", "c"}, "two waiters, longest waiting first")
	assert.Equal(e, []string{"b"}, e.waiters(wi, name(0), 1), "Waiting with limit 1")
	cancelB()
	assert.ErrorIs(e, e.ended(b, "cancelled"), context.Canceled)
	e.listed(wi, name(0), []string{"c"}, "a waiter whose context ended")
	e.release(a)
	got := e.handedOff(c, name(0), "c")
	e.listed(wi, name(0), nil, "a waiter that got the lock")
	e.release(got)
}

// testWaitingBadInput: Waiting refuses a nil context, an empty name and a
// negative limit.
func testWaitingBadInput(e *env, wi lockprovider.WaitInspector) {
	var nilCtx context.Context
	for _, c := range []struct {
		what  string
		ctx   context.Context
		name  string
		limit int
	}{
		{"nil ctx", nilCtx, name(0), 0},
		{"empty name", e.ctx, "", 0},
		{"negative limit", e.ctx, name(0), -1},
	} {
		ws, err := wi.Waiting(c.ctx, c.name, c.limit)
		assert.ErrorIs(e, err, lease.ErrInvalidArgument, c.what)
		assert.Empty(e, ws, c.what)
	}
}

// testTimeBase: the provider's Clock is the clock its leases expire on: it
// reads the time the suite's clock reads, and a lease acquired expires d
// after it.
func testTimeBase(e *env, tb lockprovider.TimeBase) {
	slack := time.Duration(0)
	if !e.fake() {
		slack = realSlack
	}
	clock := suite.TimeBase(e, tb, e.clock, slack)
	start := clock.Now()
	l := e.acquire(name(0), "a", e.d)
	end := clock.Now()
	assert.False(e, l.ExpiresAt.Before(start.Add(e.d)) || l.ExpiresAt.After(end.Add(e.d)),
		"ExpiresAt is %v, want d after a reading of Clock between %v and %v", l.ExpiresAt, start, end)
	assert.False(e, clock.Now().Before(end), "the provider's Clock runs forward")
	e.release(l)
}

// testWatchHolder: WatchHolder reports the holder of a held lock, then
// each new holder, and returns ctx.Err() once its context ends.
func testWatchHolder(e *env, hw lockprovider.HolderWatcher) {
	a := e.acquire(name(0), "a", e.d)
	seen := make(chan lock.Holding, 64)
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() {
		done <- hw.WatchHolder(ctx, name(0), func(h lock.Holding) {
			select {
			case seen <- h:
			default: // fn must not block; the clause reads far fewer
			}
		})
	}()
	e.Cleanup(func() {
		cancel()
		<-done
	})
	next := func(token uint64, what string) {
		e.Helper()
		deadline := time.After(handOffLimit)
		for {
			select {
			case h := <-seen:
				assert.Equal(e, name(0), h.Name, "%s: Holding.Name", what)
				if h.Token == token {
					return
				}
				assert.Less(e, h.Token, token, "%s: a holding reported out of order", what)
			case <-deadline:
				e.Fatalf("%s: WatchHolder did not report token %d within %v", what, token, handOffLimit)
			}
		}
	}
	next(a.Token, "the holder when the watch began")
	e.release(a)
	b := e.acquire(name(0), "b", e.d)
	next(b.Token, "the next holder")
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(e, err, context.Canceled, "WatchHolder returns ctx.Err() once ctx ends")
	case <-time.After(handOffLimit):
		e.Fatalf("WatchHolder did not return within %v of its context's end", handOffLimit)
	}
	done <- nil // for the cleanup
	e.release(b)
}
