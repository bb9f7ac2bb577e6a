package claim

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/lease"
)

// DefaultMaxAttempts is the number of claims an item gets before a failure
// or a lost claim dead-letters it, unless New or Enqueue says otherwise.
const DefaultMaxAttempts = 25

// Option configures a Broker. Options are applied in order by New. An
// Option holds only the setting it applies, so it may be shared between
// goroutines and Brokers.
type Option interface {
	apply(*options)
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	clock       lease.Clock
	maxAttempts int
	jitter      func(time.Duration) time.Duration
	onPanic     func(*lease.PanicError)
	observer    Observer                              // nil: none (WithObserver)
	onError     func(context.Context, HandlerFailure) // nil: none (WithErrorHook)
}

func defaultOptions() options {
	return options{maxAttempts: DefaultMaxAttempts, onPanic: lease.LogPanic}
}

// WithMaxAttempts sets the default number of attempts of an item (default
// DefaultMaxAttempts). It panics if n < 1.
func WithMaxAttempts(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("claim: WithMaxAttempts(%d): need n >= 1", n))
	}
	return optionFunc(func(o *options) { o.maxAttempts = n })
}

// WithJitter makes Fail pass every backoff delay through f and use its
// result, clamped to [0, maxDelay]. For "full jitter" use
//
//	claim.WithJitter(func(d time.Duration) time.Duration { return rand.N(d + 1) })
//
// f is called by Fail on the caller's goroutine, before the item is
// requeued and outside the Broker's lock, so it may call the Broker; it
// must be safe for concurrent use. A panic in f is reported to the panic
// handler (see WithPanicHandler) and the delay without jitter is used.
// Without WithJitter delays are deterministic. It panics if f is nil.
func WithJitter(f func(delay time.Duration) time.Duration) Option {
	if f == nil {
		panic("claim: WithJitter: nil func")
	}
	return optionFunc(func(o *options) { o.jitter = f })
}

// WithPanicHandler sets the function that receives the panics recovered from
// the Broker's user callbacks: Work handlers (Callback "work handler"), the
// jitter function ("jitter"), the observer ("observer") and the error hook
// ("error hook"). The default is lease.LogPanic. The module
// treats every panicking callback alike: the panic is recovered and
// reported, and the Broker goes on as if the callback had returned (a
// handler's item is failed with reason "panic: " and the value; a jitter
// function's delay is not jittered). h runs on the goroutine of the
// callback that panicked, outside the Broker's lock; it must not panic
// itself. It panics if h is nil.
func WithPanicHandler(h func(*lease.PanicError)) Option {
	if h == nil {
		panic("claim: WithPanicHandler: nil handler")
	}
	return optionFunc(func(o *options) { o.onPanic = h })
}

// EnqueueOption configures one Enqueue call. Invalid values are reported by
// Enqueue as errors. An EnqueueOption holds only the setting it applies, so
// it may be shared between goroutines and calls.
type EnqueueOption interface {
	applyEnqueue(enqueueOptions) enqueueOptions
}

// enqueueOptionFunc passes the options by value, so that they stay on
// Enqueue's stack.
type enqueueOptionFunc func(enqueueOptions) enqueueOptions

func (f enqueueOptionFunc) applyEnqueue(o enqueueOptions) enqueueOptions { return f(o) }

type enqueueOptions struct {
	delay       time.Duration
	maxAttempts int
	setMax      bool
	key         string
	hasKey      bool
	priority    int
	timeout     time.Duration
	tags        []string
	metadata    []byte
	unique      *UniqueOpts
}

// Delay makes the item visible d after Enqueue instead of at once. d must
// not be negative.
func Delay(d time.Duration) EnqueueOption {
	return enqueueOptionFunc(func(o enqueueOptions) enqueueOptions { o.delay = d; return o })
}

// MaxAttempts overrides the Broker's default number of attempts for this
// item. n must be at least 1.
func MaxAttempts(n int) EnqueueOption {
	return enqueueOptionFunc(func(o enqueueOptions) enqueueOptions { o.maxAttempts, o.setMax = n, true; return o })
}

// Key makes Enqueue idempotent: while an item with this key exists in the
// queue (visible, delayed, claimed or dead), Enqueue returns that item and
// adds nothing. Once the item is completed or deleted the key is free.
// key must not be empty.
func Key(key string) EnqueueOption {
	return enqueueOptionFunc(func(o enqueueOptions) enqueueOptions { o.key, o.hasKey = key, true; return o })
}

// Priority orders the item among the claimable items of its queue: lower
// first, from 0 (the default) to MaxPriority; items of one priority are
// claimed earliest visible first.
func Priority(p int) EnqueueOption {
	return enqueueOptionFunc(func(o enqueueOptions) enqueueOptions { o.priority = p; return o })
}

// Timeout bounds each run of the item's Work handler: after d its context
// is cancelled and, if it returns an error, the item is failed with a
// reason saying it timed out. It overrides the Worker's Timeout. d must be
// between 0 and MaxTimeout; zero means the Worker's.
func Timeout(d time.Duration) EnqueueOption {
	return enqueueOptionFunc(func(o enqueueOptions) enqueueOptions { o.timeout = d; return o })
}

// WithClock sets the clock Work runs its heartbeats, handler timeouts and
// stop timeout on, for a store that does not provide one (Memory does, its
// service's, which takes precedence). The default is lease.SystemClock.
// It panics if c is nil.
func WithClock(c lease.Clock) Option {
	if c == nil {
		panic("claim: WithClock: nil clock")
	}
	return optionFunc(func(o *options) { o.clock = c })
}
