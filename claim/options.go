package claim

import (
	"context"
	"strconv"
	"time"

	"github.com/leasehold/lease/claim/claimstore"
	"github.com/leasehold/lease/internal/callback"
	"github.com/leasehold/lease/internal/sharedopt"
)

// DefaultMaxAttempts is the number of claims an item gets before a failure
// or a lost claim dead-letters it, unless New or Enqueue says otherwise;
// see claimstore.DefaultMaxAttempts.
const DefaultMaxAttempts = claimstore.DefaultMaxAttempts

// Option configures a Broker. Options are applied in order by New. An
// Option holds only the setting it applies, so it may be shared between
// goroutines and Brokers.
//
// An option constructor never panics: New returns a *lease.Error with Code
// lease.CodeInvalidArgument whose Field names the first option given a
// value it can never take (a nil function or clock, fewer than one
// attempt).
//
// The clock, the panic handler and the logger are set by the options every
// constructor of the module shares: lease.WithClock, lease.WithPanicHandler
// and lease.WithLogger, which are Options too (see lease.SharedOption). The
// method ApplyClaim takes a type internal to the module: only the module's
// options implement Option.
type Option interface {
	ApplyClaim(*sharedopt.Target)
}

type optionFunc func(*options)

func (f optionFunc) ApplyClaim(t *sharedopt.Target) { f(t.Own.(*options)) }

type options struct {
	shared      sharedopt.Settings // lease.WithClock, WithPanicHandler, WithLogger
	maxAttempts int
	jitter      func(time.Duration) time.Duration
	report      callback.Report                       // to the panic handler, or the logger
	observer    Observer                              // nil: none (WithObserver)
	tracers     []HandlerTracer                       // the observer's, or those it joins (lease.Observers)
	onError     func(context.Context, HandlerFailure) // nil: none (WithErrorHook)
}

// refuse records that option was given a value it can never take, unless
// an earlier option was refused already: New reports the first.
func (o *options) refuse(option, detail string) { o.shared.Refuse(option, detail) }

func defaultOptions() options {
	return options{maxAttempts: DefaultMaxAttempts}
}

// WithMaxAttempts sets the default number of attempts of an item (default
// DefaultMaxAttempts). New returns an error if n < 1.
func WithMaxAttempts(n int) Option {
	return optionFunc(func(o *options) {
		if n < 1 {
			o.refuse("WithMaxAttempts", strconv.Itoa(n)+" attempts is less than 1")
			return
		}
		o.maxAttempts = n
	})
}

// WithJitter makes Fail pass every backoff delay through f and use its
// result, clamped to [0, maxDelay]. For "full jitter" use
//
//	claim.WithJitter(func(d time.Duration) time.Duration { return rand.N(d + 1) })
//
// f is called by Fail on the caller's goroutine, before the item is
// requeued and outside the Broker's lock, so it may call the Broker; it
// must be safe for concurrent use. A panic in f is reported to the panic
// handler (see lease.WithPanicHandler) and the delay without jitter is used.
// Without WithJitter delays are deterministic. New returns an error if f
// is nil.
func WithJitter(f func(delay time.Duration) time.Duration) Option {
	return optionFunc(func(o *options) {
		if f == nil {
			o.refuse("WithJitter", "func must not be nil")
			return
		}
		o.jitter = f
	})
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
