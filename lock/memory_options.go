package lock

import (
	"time"

	"github.com/leasehold/lease"
)

// MemoryOption configures a Memory. Options are plain values, safe to share
// and reuse. An option constructor never panics: NewMemory returns a
// *lease.Error with Code lease.CodeInvalidArgument whose Field names the
// first option given a value that can never be valid.
type MemoryOption interface {
	applyMemory(*memoryOptions)
}

type memoryOptions struct {
	prefix  string
	purpose lease.Purpose
	delay   time.Duration
	bad     error // the first option refused, reported by NewMemory
}

// refuse records that option was given a value it can never take, unless
// an earlier option was refused already: NewMemory reports the first.
func (o *memoryOptions) refuse(option, detail string) {
	if o.bad == nil {
		o.bad = invalid(opNewMemory, option, detail)
	}
}

type memoryOptionFunc func(*memoryOptions)

func (f memoryOptionFunc) applyMemory(o *memoryOptions) { f(o) }

// WithKeyPrefix sets the prefix of the service keys that hold locks
// (default "lock/"). NewMemory returns an error if prefix is empty: locks
// would then share the key space with everything else.
func WithKeyPrefix(prefix string) MemoryOption {
	return memoryOptionFunc(func(o *memoryOptions) {
		if prefix == "" {
			o.refuse("WithKeyPrefix", "prefix must not be empty")
			return
		}
		o.prefix = prefix
	})
}

// WithPurpose sets the purpose of the leases that hold locks (default
// lease.Operation), so that code holding the lease ID can check its use
// with lease.Service.Use. NewMemory returns an error if p is not a valid
// purpose.
func WithPurpose(p lease.Purpose) MemoryOption {
	return memoryOptionFunc(func(o *memoryOptions) {
		if !p.Valid() {
			o.refuse("WithPurpose", p.String()+" is not a valid purpose")
			return
		}
		o.purpose = p
	})
}

// WithLockDelay sets a lock-delay, as in Chubby: after a lease expires (not
// after a release), its lock cannot be acquired again until the delay has
// passed since the expiry, so a stalled holder's late writes land before
// the next holder starts. The default is no delay. NewMemory returns an
// error if d is negative.
func WithLockDelay(d time.Duration) MemoryOption {
	return memoryOptionFunc(func(o *memoryOptions) {
		if d < 0 {
			o.refuse("WithLockDelay", "delay "+d.String()+" is negative")
			return
		}
		o.delay = d
	})
}
