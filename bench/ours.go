package bench

import (
	"context"
	"errors"
	"time"

	"github.com/leasehold/lease"
)

// Ours drives a lease.Service on the system clock with default options. It
// is safe for concurrent use.
type Ours struct {
	svc  *lease.Service
	ctx  context.Context
	stop func()
}

// NewOurs returns an adapter over a fresh lease.Service.
func NewOurs() *Ours {
	return &Ours{svc: lease.Must(lease.New(lease.WithClock(lease.SystemClock()))), ctx: context.Background()}
}

// OursPeer describes lease.Service.
func OursPeer() Peer {
	return Peer{Key: "lease", Name: "lease (ours)", New: func() (Leaser, error) { return NewOurs(), nil }}
}

func (*Ours) concurrent() {}

// Grant grants an Operation lease to holder "bench".
func (o *Ours) Grant(ttl time.Duration) (ID, error) {
	l, err := o.svc.Grant(o.ctx, "bench", lease.Operation, ttl)
	return ID(l.ID), err
}

// Renew renews the lease.
func (o *Ours) Renew(id ID) error {
	_, err := o.svc.Renew(o.ctx, lease.ID(id))
	return err
}

// Revoke revokes the lease and deletes its keys.
func (o *Ours) Revoke(id ID) error {
	_, err := o.svc.Revoke(o.ctx, lease.ID(id))
	return err
}

// Attach puts key with value, attached to the lease.
func (o *Ours) Attach(id ID, key string, value []byte) error {
	return o.svc.Put(o.ctx, key, value, lease.ID(id))
}

// Holder returns the lease key is attached to.
func (o *Ours) Holder(key string) (ID, bool) {
	_, id, ok, err := o.svc.Get(o.ctx, key)
	return ID(id), ok && err == nil
}

// Use checks that the lease is active (Service.Use for Operation).
func (o *Ours) Use(id ID) error {
	_, err := o.svc.Use(o.ctx, lease.ID(id), lease.Operation)
	return err
}

// Deadline returns the lease's ExpiresAt; an ended lease is ErrUnknown.
func (o *Ours) Deadline(id ID) (time.Time, error) {
	l, err := o.svc.Info(o.ctx, lease.ID(id))
	if err != nil {
		return time.Time{}, errors.Join(ErrUnknown, err)
	}
	return l.ExpiresAt, nil
}

// OnExpire subscribes fn to expiries through Service.OnEnd.
func (o *Ours) OnExpire(fn func(ID)) {
	o.stop = o.svc.OnEnd(func(l lease.Lease, r lease.EndReason) {
		if r == lease.EndExpired {
			fn(ID(l.ID))
		}
	})
}

// Close unsubscribes and closes the service.
func (o *Ours) Close() error {
	if o.stop != nil {
		o.stop()
	}
	return o.svc.Close()
}
