package replicated

import (
	"time"

	"github.com/leasehold/lease"
)

// LockOption configures a LockProvider. Options are plain values, safe to
// share and reuse. An option constructor never panics: NewLockProvider
// returns a *lease.Error with Code lease.CodeInvalidArgument whose Field
// names the first option given a value that can never be valid.
type LockOption interface {
	applyLock(*lockOptions)
}

type lockOptions struct {
	prefix  string
	purpose lease.Purpose
	recheck time.Duration
	bad     error // the first option refused, reported by NewLockProvider
}

// refuse records that option was given a value it can never take, unless
// an earlier option was refused already: NewLockProvider reports the first.
func (o *lockOptions) refuse(option, detail string) {
	if o.bad == nil {
		o.bad = invalidOp(opNewLockProvider, option, detail)
	}
}

type lockOptionFunc func(*lockOptions)

func (f lockOptionFunc) applyLock(o *lockOptions) { f(o) }

// WithLockPrefix sets the prefix of the keys that hold locks (default
// "lock/"). NewLockProvider refuses an empty prefix: locks would then share
// the key space with everything else.
func WithLockPrefix(prefix string) LockOption {
	return lockOptionFunc(func(o *lockOptions) {
		if prefix == "" {
			o.refuse("WithLockPrefix", "prefix must not be empty")
			return
		}
		o.prefix = prefix
	})
}

// WithLockPurpose sets the purpose of the leases that hold locks (default
// lease.Operation), so that code holding a lock's token can check its use
// with Node.Use. NewLockProvider refuses a purpose that is not valid.
func WithLockPurpose(p lease.Purpose) LockOption {
	return lockOptionFunc(func(o *lockOptions) {
		if !p.Valid() {
			o.refuse("WithLockPurpose", p.String()+" is not a valid purpose")
			return
		}
		o.purpose = p
	})
}

// WithLockRecheck sets how long the first waiter of a lock waits for the
// node to apply an ending before it tries again anyway (default
// DefaultLockRecheck): the bound on a hand-off whose ending the node did
// not apply (it installed a snapshot instead) or that ended no lease (the
// key was deleted outside the provider). NewLockProvider refuses d <= 0.
func WithLockRecheck(d time.Duration) LockOption {
	return lockOptionFunc(func(o *lockOptions) {
		if d <= 0 {
			o.refuse("WithLockRecheck", "interval "+d.String()+" is not positive")
			return
		}
		o.recheck = d
	})
}
