package claim

import (
	"fmt"
	"time"
)

// DefaultMaxAttempts is the number of claims an item gets before a failure
// or a lost claim dead-letters it, unless New or Enqueue says otherwise.
const DefaultMaxAttempts = 25

// Option configures a Broker. Options are applied in order by New.
type Option interface {
	apply(*options)
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	maxAttempts int
	jitter      func(time.Duration) time.Duration
}

func defaultOptions() options {
	return options{maxAttempts: DefaultMaxAttempts}
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
// f must be safe for concurrent use; it is called under the Broker's lock,
// so it must not call the Broker. Without it delays are deterministic. It
// panics if f is nil.
func WithJitter(f func(delay time.Duration) time.Duration) Option {
	if f == nil {
		panic("claim: WithJitter: nil func")
	}
	return optionFunc(func(o *options) { o.jitter = f })
}

// EnqueueOption configures one Enqueue call. Invalid values are reported by
// Enqueue as errors.
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
