package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-semver/semver"
	"go.etcd.io/etcd/api/v3/version"
	etcdlease "go.etcd.io/etcd/server/v3/lease"
	"go.etcd.io/etcd/server/v3/storage/backend"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
	"go.uber.org/zap"
)

// Etcd settings as etcdserver derives them from its default configuration:
// MinLeaseTTL is ceil(3/2 election ticks * 100 ms heartbeat) = 2 s, and
// ExpiredLeasesRetryInterval is the request timeout, 5 s + 2 * 1 s election.
const (
	etcdMinLeaseTTL   = 2
	etcdRetryInterval = 7 * time.Second
)

// Etcd drives etcd's lessor (go.etcd.io/etcd/server/v3/lease) constructed
// as etcdserver constructs it: on a bbolt backend in a temporary directory,
// with the mvcc store as its range deleter, promoted to primary. Keys are
// attached by mvcc puts, as etcd attaches them. Expired leases are taken
// from ExpiredLeasesC and revoked directly, as the server would after raft
// (which is left out).
//
// It is safe for concurrent use. etcd applies grants, revokes and puts one
// at a time from its raft apply loop, and its lessor relies on that: a Grant
// concurrent with a Revoke deadlocks (lessor lock, then backend batch lock,
// against the reverse). The adapter serialises them the same way with
// apply; renewals, which etcd serves concurrently, are not serialised.
type Etcd struct {
	dir    string
	be     backend.Backend
	lessor etcdlease.Lessor
	kv     mvcc.WatchableKV
	last   atomic.Int64
	apply  sync.Mutex // etcd's apply loop: one mutation at a time

	mu       sync.Mutex
	onExpire func(ID)
	stopc    chan struct{}
	loop     sync.WaitGroup
}

// NewEtcd returns an adapter over a fresh lessor and backend.
func NewEtcd() (*Etcd, error) {
	dir, err := os.MkdirTemp("", "lease-bench-etcd-")
	if err != nil {
		return nil, err
	}
	lg := zap.NewNop()
	be := backend.NewDefaultBackend(lg, filepath.Join(dir, "member.db"))
	le := etcdlease.NewLessor(lg, be, etcdCluster{}, etcdlease.LessorConfig{
		MinLeaseTTL:                etcdMinLeaseTTL,
		ExpiredLeasesRetryInterval: etcdRetryInterval,
	})
	e := &Etcd{
		dir:    dir,
		be:     be,
		lessor: le,
		kv:     mvcc.New(lg, be, le, mvcc.StoreConfig{}),
		stopc:  make(chan struct{}),
	}
	le.Promote(0)
	e.loop.Go(e.revokeExpired)
	return e, nil
}

// EtcdPeer describes etcd's lessor. Its expiry is rate-limited to 1,000
// leases a second, so the expiry scenarios use fewer leases.
func EtcdPeer() Peer {
	return Peer{
		Key:        "etcd",
		Name:       "etcd lessor",
		New:        func() (Leaser, error) { return NewEtcd() },
		SlowExpiry: true,
		Why: "etcd's lessor revokes at most 1,000 expired leases a second (leaseRevokeRate, not configurable), " +
			"so 1,000,000 expiring would take about 17 minutes and 100,000 spread over 2 s would measure the backlog, not the lag; " +
			"and with keys (7k) every put goes through bbolt, so 2,000,000 keys take minutes a run while the bytes per lease do not depend on the count",
	}
}

type etcdCluster struct{}

func (etcdCluster) Version() *semver.Version { return semver.New(version.Version) }

func (*Etcd) concurrent() {}

// Grant grants a lease of ttl rounded up to whole seconds (etcd's unit)
// and at least etcd's 2 s minimum.
func (e *Etcd) Grant(ttl time.Duration) (ID, error) {
	id := e.last.Add(1)
	secs := int64((ttl + time.Second - 1) / time.Second)
	e.apply.Lock()
	defer e.apply.Unlock()
	_, err := e.lessor.Grant(etcdlease.LeaseID(id), secs)
	return ID(id), err
}

// Renew renews the lease (a keep-alive).
func (e *Etcd) Renew(id ID) error {
	_, err := e.lessor.Renew(etcdlease.LeaseID(id))
	return etcdErr(err)
}

// Revoke revokes the lease, deleting its keys from the mvcc store.
func (e *Etcd) Revoke(id ID) error {
	e.apply.Lock()
	defer e.apply.Unlock()
	return etcdErr(e.lessor.Revoke(etcdlease.LeaseID(id)))
}

// Attach puts key into the mvcc store with the lease, after the check
// etcd's applier makes (mvcc panics on an unknown lease).
func (e *Etcd) Attach(id ID, key string, value []byte) error {
	e.apply.Lock()
	defer e.apply.Unlock()
	if e.lessor.Lookup(etcdlease.LeaseID(id)) == nil {
		return ErrUnknown
	}
	e.kv.Put([]byte(key), value, etcdlease.LeaseID(id))
	return nil
}

// Holder reads key from the mvcc store and returns its lease.
func (e *Etcd) Holder(key string) (ID, bool) {
	r, err := e.kv.Range(context.Background(), []byte(key), nil, mvcc.RangeOptions{})
	if err != nil || len(r.KVs) == 0 {
		return 0, false
	}
	return ID(r.KVs[0].Lease), true
}

// Deadline returns now plus the lease's remaining time.
func (e *Etcd) Deadline(id ID) (time.Time, error) {
	l := e.lessor.Lookup(etcdlease.LeaseID(id))
	if l == nil {
		return time.Time{}, ErrUnknown
	}
	return time.Now().Add(l.Remaining()), nil
}

// OnExpire sets fn to be called after each expired lease is revoked.
func (e *Etcd) OnExpire(fn func(ID)) {
	e.mu.Lock()
	e.onExpire = fn
	e.mu.Unlock()
}

// revokeExpired does what etcdserver's run loop does with expired leases,
// minus raft: revoke each one.
func (e *Etcd) revokeExpired() {
	for {
		select {
		case <-e.stopc:
			return
		case ls := <-e.lessor.ExpiredLeasesC():
			e.mu.Lock()
			fn := e.onExpire
			e.mu.Unlock()
			for _, l := range ls {
				if e.Revoke(ID(l.ID)) == nil && fn != nil {
					fn(ID(l.ID))
				}
			}
		}
	}
}

// Close stops the lessor, the store and the backend and removes the
// temporary directory.
func (e *Etcd) Close() error {
	close(e.stopc)
	e.loop.Wait()
	e.lessor.Stop()
	e.kv.Close()
	return errors.Join(e.be.Close(), os.RemoveAll(e.dir))
}

func etcdErr(err error) error {
	if errors.Is(err, etcdlease.ErrLeaseNotFound) {
		return errors.Join(ErrUnknown, err)
	}
	return err
}
