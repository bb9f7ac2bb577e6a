package lock

import (
	"fmt"
	"time"

	"github.com/leasehold/lease"
)

// MemoryOption configures a Memory. Options are plain values, safe to share
// and reuse. A value that can never be valid makes the option constructor
// panic.
type MemoryOption interface {
	applyMemory(*memoryOptions)
}

type memoryOptions struct {
	prefix  string
	purpose lease.Purpose
	delay   time.Duration
}

type memoryOptionFunc func(*memoryOptions)

func (f memoryOptionFunc) applyMemory(o *memoryOptions) { f(o) }

// WithKeyPrefix sets the prefix of the service keys that hold locks
// (default "lock/"). It panics if prefix is empty: locks would then share
// the key space with everything else.
func WithKeyPrefix(prefix string) MemoryOption {
	if prefix == "" {
		panic("lock: WithKeyPrefix: empty prefix")
	}
	return memoryOptionFunc(func(o *memoryOptions) { o.prefix = prefix })
}

// WithPurpose sets the purpose of the leases that hold locks (default
// lease.Operation), so that code holding the lease ID can check its use
// with lease.Service.Use. It panics if p is not a valid purpose.
func WithPurpose(p lease.Purpose) MemoryOption {
	if !p.Valid() {
		panic(fmt.Sprintf("lock: WithPurpose: %v is not a valid purpose", p))
	}
	return memoryOptionFunc(func(o *memoryOptions) { o.purpose = p })
}

// WithLockDelay sets a lock-delay, as in Chubby: after a lease expires (not
// after a release), its lock cannot be acquired again until the delay has
// passed since the expiry, so a stalled holder's late writes land before
// the next holder starts. The default is no delay. It panics if d is
// negative.
func WithLockDelay(d time.Duration) MemoryOption {
	if d < 0 {
		panic(fmt.Sprintf("lock: WithLockDelay(%v): negative", d))
	}
	return memoryOptionFunc(func(o *memoryOptions) { o.delay = d })
}
