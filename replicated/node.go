// Package replicated runs a lease service on a cluster of nodes kept in
// agreement by hashicorp/raft, so that losing a node loses no lease or key.
//
// Every change is a raft log entry stamped with the leader's time, and every
// node applies the same entries to its own lease.Service at those instants.
// The leader decides expiries: at the earliest deadline it commits an entry
// carrying that instant, and every node ends the same leases when it applies
// it. A new leader starts from the last committed instant, so the service's
// time never runs backwards across a failover.
package replicated

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"

	"github.com/leasehold/lease"
)

// Server names one member of the cluster. It is a plain value.
type Server struct {
	ID      string // raft server ID, unique in the cluster
	Address string // raft transport address, host:port for TCP
}

// Config describes one node. It is a plain value: Open copies what it
// needs, and the caller may reuse it afterwards.
type Config struct {
	// ID is this node's raft server ID.
	ID string
	// Dir holds the node's raft log, stable store and snapshots. It must
	// not be shared with another node.
	Dir string
	// Transport carries raft traffic. When nil, a TCP transport listens on
	// Bind.
	Transport raft.Transport
	// Bind is the TCP address the raft transport listens on when Transport
	// is nil.
	Bind string
	// Bootstrap lists the initial members. A node whose Dir holds no state
	// bootstraps the cluster with them; a node with state ignores it.
	Bootstrap []Server
	// Raft tunes hashicorp/raft. Nil uses defaults suited to a LAN.
	Raft *raft.Config
	// Options configure the lease.Service each node applies the log to
	// (TTL bounds, capacities). Clocks are the node's own: WithClock is
	// refused.
	Options []lease.Option

	// stores, when set (by tests), replaces the bolt and file stores in Dir.
	stores func() (raft.LogStore, raft.StableStore, raft.SnapshotStore)
	// onTerm, when set (by tests), is called when a term of this node
	// becomes ready to serve or ends.
	onTerm func()
}

// ErrNotLeader matches the error of a write (or a linearizable read) sent to
// a node that is not the leader; errors.As with *NotLeaderError names the
// leader, when one is known.
var ErrNotLeader = errors.New("replicated: not the leader")

// NotLeaderError is returned by an operation that only the leader can serve.
// The operation never entered the log, so sending it to the leader is safe.
// It is a plain value.
type NotLeaderError struct {
	Op            string
	LeaderID      string // empty when no leader is known
	LeaderAddress string
}

func (e *NotLeaderError) Error() string {
	if e.LeaderID == "" {
		return "replicated: " + e.Op + ": not the leader, and no leader is known"
	}
	return "replicated: " + e.Op + ": not the leader; the leader is " + e.LeaderID + " at " + e.LeaderAddress
}

// Is reports whether target is ErrNotLeader.
func (e *NotLeaderError) Is(target error) bool { return target == ErrNotLeader }

// ReadOption changes how a read is served. ReadOptions are immutable and
// safe for concurrent use.
type ReadOption interface{ applyRead(*readOptions) }

type readOptions struct{ stale bool }

type readOptionFunc func(*readOptions)

func (f readOptionFunc) applyRead(o *readOptions) { f(o) }

// Stale serves a read from the node's own state, on any node, without
// confirming leadership: it may miss the latest writes, and may show a
// lease whose expiry has passed that the log has not ended yet (while no
// node leads, for instance). A linearizable read shows neither.
func Stale() ReadOption { return readOptionFunc(func(o *readOptions) { o.stale = true }) }

// Node is one member of a replicated lease service. Writes go to the leader;
// reads are linearizable (leader only) unless Stale. A linearizable read
// that finds a lease's expiry passed by the leader's clock first commits
// an entry that ends it, so it never shows a lease past its expiry. A Node is safe for
// concurrent use.
type Node struct {
	raft      *raft.Raft
	fsm       *fsm
	closers   []io.Closer // stores and the transport the node opened
	notify    chan bool   // raft's leadership changes
	queue     chan *request
	tickCh    chan time.Time // the deadline the expiry loop wants ended; capacity 1
	inflight  chan *flight
	clockMove chan struct{} // the earliest deadline may have moved; capacity 1

	term        atomic.Pointer[term] // the leadership term under way; nil when not leader
	termMu      sync.Mutex           // orders term starts with currentTerm's waits
	termStarted chan struct{}        // closed when a term starts; nil when nobody waits
	onTerm      func()

	verifyMu sync.RWMutex // held for reading by leadership confirmations

	subsMu sync.Mutex
	subs   atomic.Pointer[[]*endSub]

	wg        sync.WaitGroup
	closing   chan struct{} // closed by Close first
	stopped   chan struct{} // closed once the node's goroutines are gone
	closeOnce sync.Once
	closeErr  error
}

// Bounds of the leader's queues.
const (
	queueCap    = 8192    // commands waiting for the batcher
	maxBatch    = 1024    // commands in one log entry
	maxBatchLen = 1 << 20 // encoded bytes in one log entry
	// inflightCap leaves the batcher one entry ahead of the one the
	// responder waits for: two entries in flight, as many as raft's two
	// stages (the leader's log write, then a follower's). Deeper pipelines
	// measured slower: more, smaller entries, each with raft's own costs.
	inflightCap = 0
)

// Open starts a node: it opens (or creates) its stores in cfg.Dir, joins the
// raft cluster and returns once the node is running (not necessarily
// leader). Bad configuration gets a *lease.Error with CodeInvalidArgument
// naming the field; so does a Dir that another node, in this process or
// another, holds open (Field "Dir", at once, without waiting for it).
//
// Raft settings the node cannot honour are refused, naming the field:
// NotifyCh (the node consumes leadership changes itself; use
// Raft().LeaderCh or RegisterObserver), NoSnapshotRestoreOnStart (the
// node's state is rebuilt from its latest snapshot when it starts),
// RestoreCommittedLogs (the bolt store does not track commits), a LocalID
// other than ID, a ProtocolVersion below 3 and an unknown LogLevel. The
// node turns raft's BatchApplyCh on (its batcher is the only proposer).
// Without a Logger, raft, the transport and the snapshot store log to
// LogOutput (stderr when nil) at LogLevel (warnings and errors when both
// are empty).
// The bolt log store in Dir syncs every commit but not its freelist, which
// is rebuilt when the file is opened.
func Open(ctx context.Context, cfg Config) (*Node, error) {
	if ctx == nil {
		return nil, invalid("ctx", "must not be nil")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := validate(&cfg); err != nil {
		return nil, err
	}
	n := &Node{
		notify:    make(chan bool, 16),
		queue:     make(chan *request, queueCap),
		tickCh:    make(chan time.Time, 1),
		inflight:  make(chan *flight, inflightCap),
		clockMove: make(chan struct{}, 1),
		closing:   make(chan struct{}),
		stopped:   make(chan struct{}),
		onTerm:    cfg.onTerm,
	}
	rc, err := raftConfig(&cfg)
	if err != nil {
		return nil, err
	}
	rc.NotifyCh = n.notify
	if err := n.open(cfg, rc); err != nil {
		if n.fsm != nil {
			n.fsm.close()
		}
		_ = n.closeAll()
		return nil, err
	}
	n.wg.Add(3)
	go n.run()
	go n.batcher()
	go n.responder()
	return n, nil
}

// open opens the stores and the transport and starts raft.
func (n *Node) open(cfg Config, rc *raft.Config) error {
	var (
		logs   raft.LogStore
		stable raft.StableStore
		snaps  raft.SnapshotStore
	)
	if cfg.stores != nil {
		logs, stable, snaps = cfg.stores()
	} else {
		if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
			return fmt.Errorf("replicated: open: %w", err)
		}
		path := filepath.Join(cfg.Dir, "raft.db")
		bolt, err := raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: boltOptions()})
		//lint:ignore SA1019 the bbolt this module requires has no errors package
		if errors.Is(err, bbolt.ErrTimeout) {
			return invalid("Dir", "in use by another node: "+path+" is locked by another process, or by a node of this one that is still open")
		}
		if err != nil {
			return fmt.Errorf("replicated: open: log store: %w", err)
		}
		n.closers = append(n.closers, bolt)
		logs, stable = bolt, bolt
		fss, err := raft.NewFileSnapshotStoreWithLogger(cfg.Dir, 2, rc.Logger)
		if err != nil {
			return fmt.Errorf("replicated: open: snapshot store: %w", err)
		}
		snaps = fss
	}
	trans := cfg.Transport
	if trans == nil {
		tcp, err := raft.NewTCPTransportWithLogger(cfg.Bind, nil, 3, 10*time.Second, rc.Logger)
		if err != nil {
			return fmt.Errorf("replicated: open: transport: %w", err)
		}
		n.closers = append(n.closers, closerFunc(func() error {
			tcp.CloseStreams() // closing our connections ends the peers' handlers of them
			return tcp.Close()
		}))
		trans = tcp
	}
	n.fsm = newFSM(cfg.Options, n.dispatchEnd, n.clockMoved)
	existing, err := raft.HasExistingState(logs, stable, snaps)
	if err != nil {
		return fmt.Errorf("replicated: open: %w", err)
	}
	if !existing && len(cfg.Bootstrap) > 0 {
		var conf raft.Configuration
		for _, s := range cfg.Bootstrap {
			conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(s.ID), Address: raft.ServerAddress(s.Address)})
		}
		if err := raft.BootstrapCluster(rc, logs, stable, snaps, trans, conf); err != nil {
			return fmt.Errorf("replicated: open: bootstrap: %w", err)
		}
	}
	r, err := raft.NewRaft(rc, n.fsm, logs, stable, snaps, trans)
	if err != nil {
		return fmt.Errorf("replicated: open: %w", err)
	}
	n.raft = r
	return nil
}

// boltOptions are bbolt's defaults except that the freelist is not written
// on every commit (it is rebuilt when the file is opened) and is kept as a
// hash map: a commit then writes fewer pages, and its fsyncs, which every
// write waits for on the leader and on a follower in turn, are shorter.
// Every commit is still synced.
//
// The file lock is tried once: a lock held means another node has the
// directory open, and waiting for it would only delay the error. (A zero
// Timeout would wait forever; bbolt gives up after its first attempt when
// the timeout is shorter than its retry interval.)
func boltOptions() *bbolt.Options {
	return &bbolt.Options{Timeout: time.Nanosecond, NoFreelistSync: true, FreelistType: bbolt.FreelistMapType}
}

func validate(cfg *Config) error {
	switch {
	case cfg.ID == "":
		return invalid("ID", "must not be empty")
	case cfg.Dir == "" && cfg.stores == nil:
		return invalid("Dir", "must not be empty")
	case cfg.Transport == nil && cfg.Bind == "":
		return invalid("Bind", "must not be empty when Transport is nil")
	}
	ids := make(map[string]bool, len(cfg.Bootstrap))
	self := false
	for _, s := range cfg.Bootstrap {
		if s.ID == "" || s.Address == "" {
			return invalid("Bootstrap", "a server needs an ID and an Address")
		}
		if ids[s.ID] {
			return invalid("Bootstrap", "server "+s.ID+" is listed twice")
		}
		ids[s.ID] = true
		self = self || s.ID == cfg.ID
	}
	if len(cfg.Bootstrap) > 0 && !self {
		return invalid("Bootstrap", "must list this node's ID "+cfg.ID)
	}
	// A node's service reads the log's clock. Options are opaque, so a
	// WithClock among them shows as a probe clock left unread.
	probe := &probeClock{}
	svc := lease.New(append([]lease.Option{lease.WithClock(probe)}, cfg.Options...)...)
	_ = svc.Close()
	if !probe.read.Load() {
		return invalid("Options", "WithClock is refused: a node's service reads the log's clock")
	}
	return nil
}

// probeClock tells whether a service read it.
type probeClock struct{ read atomic.Bool }

func (p *probeClock) Now() time.Time { p.read.Store(true); return clockStart }

func (p *probeClock) AfterFunc(time.Duration, func()) lease.Timer { return probeTimer{} }

type probeTimer struct{}

func (probeTimer) Stop() bool { return true }

func invalid(field, detail string) error { return invalidOp("open", field, detail) }

func invalidOp(op, field, detail string) error {
	return &lease.Error{Package: "replicated", Code: lease.CodeInvalidArgument, Op: op, Field: field, Detail: detail}
}

func closedError(op string) error {
	return &lease.Error{Package: "replicated", Code: lease.CodeClosed, Op: op}
}

// Grant creates a lease, like lease.Service.Grant, once the cluster has
// committed it.
func (n *Node) Grant(ctx context.Context, holder string, purpose lease.Purpose, ttl time.Duration) (lease.Lease, error) {
	r := n.submit(ctx, command{op: opGrant, holder: holder, purpose: purpose, ttl: ttl})
	return r.lease, r.err
}

// GrantWithKey is lease.Service.GrantWithKey, committed by the cluster.
func (n *Node) GrantWithKey(ctx context.Context, holder string, purpose lease.Purpose, ttl time.Duration, key string, value []byte) (lease.Lease, error) {
	r := n.submit(ctx, command{op: opGrantWithKey, holder: holder, purpose: purpose, ttl: ttl, key: key, value: value})
	return r.lease, r.err
}

// Renew is lease.Service.Renew, committed by the cluster.
func (n *Node) Renew(ctx context.Context, id lease.ID) (lease.Lease, error) {
	r := n.submit(ctx, command{op: opRenew, id: id})
	return r.lease, r.err
}

// RenewTTL is lease.Service.RenewTTL, committed by the cluster: the lease's
// TTL becomes ttl and it expires ttl after the renewal's instant.
func (n *Node) RenewTTL(ctx context.Context, id lease.ID, ttl time.Duration) (lease.Lease, error) {
	r := n.submit(ctx, command{op: opRenewTTL, id: id, ttl: ttl})
	return r.lease, r.err
}

// Revoke is lease.Service.Revoke, committed by the cluster.
func (n *Node) Revoke(ctx context.Context, id lease.ID) (lease.Lease, error) {
	r := n.submit(ctx, command{op: opRevoke, id: id})
	return r.lease, r.err
}

// Put is lease.Service.Put, committed by the cluster.
func (n *Node) Put(ctx context.Context, key string, value []byte, id lease.ID) error {
	return n.submit(ctx, command{op: opPut, key: key, value: value, id: id}).err
}

// Delete is lease.Service.Delete, committed by the cluster.
func (n *Node) Delete(ctx context.Context, key string) (bool, error) {
	r := n.submit(ctx, command{op: opDelete, key: key})
	return r.ok, r.err
}

// Info is lease.Service.Info as a read.
func (n *Node) Info(ctx context.Context, id lease.ID, opts ...ReadOption) (lease.Lease, error) {
	return read(n, ctx, "info", opts, func(s *lease.Service) (lease.Lease, error) { return s.Info(id) })
}

// Get is lease.Service.Get as a read.
func (n *Node) Get(ctx context.Context, key string, opts ...ReadOption) (value []byte, id lease.ID, ok bool, err error) {
	type kv struct {
		value []byte
		id    lease.ID
		ok    bool
	}
	r, err := read(n, ctx, "get", opts, func(s *lease.Service) (kv, error) {
		v, id, ok := s.Get(key)
		return kv{v, id, ok}, nil
	})
	return r.value, r.id, r.ok, err
}

// List is lease.Service.List as a read.
func (n *Node) List(ctx context.Context, opts ...ReadOption) ([]lease.Lease, error) {
	return read(n, ctx, "list", opts, func(s *lease.Service) ([]lease.Lease, error) { return s.List(), nil })
}

// read serves a read from the node's service, after the linearizable read
// barrier unless Stale.
func read[T any](n *Node, ctx context.Context, op string, opts []ReadOption, f func(*lease.Service) (T, error)) (T, error) {
	var zero T
	if err := n.readBarrier(ctx, op, opts); err != nil {
		return zero, err
	}
	for {
		st := n.fsm.state.Load()
		v, err := f(st.svc)
		if n.fsm.state.Load() == st {
			return v, err
		}
		// A snapshot restore replaced the service meanwhile: read the new one.
		select {
		case <-n.closing:
			return zero, closedError(op)
		default:
		}
	}
}

// readBarrier makes a linearizable read safe: on the leader, once its term
// has applied everything earlier terms committed, it captures the commit
// index, confirms leadership with a quorum, waits until the FSM has
// applied that index, and settles every deadline due by the leader's
// clock.
func (n *Node) readBarrier(ctx context.Context, op string, opts []ReadOption) error {
	var ro readOptions
	for _, o := range opts {
		if o != nil {
			o.applyRead(&ro)
		}
	}
	if ctx == nil {
		return invalidOp(op, "ctx", "must not be nil")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-n.closing:
		return closedError(op)
	default:
	}
	if ro.stale {
		return nil
	}
	t := n.currentTerm(ctx)
	if t == nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		return n.notLeader(op)
	}
	select {
	case <-t.ready:
	case <-t.ctx.Done():
		return n.notLeader(op)
	case <-ctx.Done():
		return ctx.Err()
	case <-n.closing:
		return closedError(op)
	}
	index := n.raft.CommitIndex()
	if err := n.verifyLeader(op); err != nil {
		return err
	}
	if index > t.barrier { // else applied before the term's barrier completed
		if err := n.fsm.waitApplied(ctx, op, index, n.closing); err != nil {
			return err
		}
	}
	return n.settle(ctx, op)
}

// verifyLeader confirms with a quorum that the node still leads. raft
// leaves a confirmation asked for while it shuts down unanswered, so Close
// waits for those under way (verifyMu) before it shuts raft down.
func (n *Node) verifyLeader(op string) error {
	n.verifyMu.RLock()
	defer n.verifyMu.RUnlock()
	select {
	case <-n.closing:
		return closedError(op)
	default:
	}
	if err := n.raft.VerifyLeader().Error(); err != nil {
		return n.raftError(op, err)
	}
	return nil
}

// Leader returns the current leader's ID and address, empty when none is
// known.
func (n *Node) Leader() (id, address string) {
	addr, sid := n.raft.LeaderWithID()
	return string(sid), string(addr)
}

// Raft returns the node's raft instance, for membership changes and
// observation. Applying to it directly bypasses the service.
func (n *Node) Raft() *raft.Raft { return n.raft }

// OnEnd subscribes fn to the endings of leases (expired or revoked) that
// this node applies, leader or follower, in the order the log ends them. fn
// runs on the node's apply goroutine, outside every lock, with a Lease of
// its own (Keys are the keys deleted); it delays the node's applies while it
// runs, so keep it short. A panic in fn is recovered and reported like one
// in a lease.Service subscriber, and the other subscribers still see the
// ending. fn is not called after stop returns, unless a call is under way,
// nor after Close returns. It panics if fn is nil.
//
// A node that catches up by installing a snapshot takes the state it
// carries without applying the entries it skips: endings among those are
// not reported on that node (the leader, which applied them, reported
// them).
func (n *Node) OnEnd(fn func(l lease.Lease, reason lease.EndReason)) (stop func()) {
	if fn == nil {
		panic("replicated: OnEnd: nil func")
	}
	sub := &endSub{fn: fn}
	n.subsMu.Lock()
	var subs []*endSub
	if p := n.subs.Load(); p != nil {
		subs = slices.Clone(*p)
	}
	subs = append(subs, sub)
	n.subs.Store(&subs)
	n.subsMu.Unlock()
	return func() {
		sub.stopped.Store(true)
		n.subsMu.Lock()
		defer n.subsMu.Unlock()
		if p := n.subs.Load(); p != nil {
			subs := slices.DeleteFunc(slices.Clone(*p), func(s *endSub) bool { return s == sub })
			n.subs.Store(&subs)
		}
	}
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

type endSub struct {
	fn      func(lease.Lease, lease.EndReason)
	stopped atomic.Bool
}

// dispatchEnd is the node's one subscriber on its service: it calls every
// OnEnd function, each with its own copy of the lease, and re-raises the
// first panic afterwards so that the service reports it.
func (n *Node) dispatchEnd(l lease.Lease, reason lease.EndReason) {
	p := n.subs.Load()
	if p == nil {
		return
	}
	var panicked any
	for _, s := range *p {
		if s.stopped.Load() {
			continue
		}
		own := l
		own.Keys = slices.Clone(l.Keys)
		func() {
			defer func() {
				if v := recover(); v != nil && panicked == nil {
					panicked = v
				}
			}()
			s.fn(own, reason)
		}()
	}
	if panicked != nil {
		panic(panicked)
	}
}

// clockMoved tells the expiry loop to look at the earliest deadline again.
func (n *Node) clockMoved() {
	select {
	case n.clockMove <- struct{}{}:
	default:
	}
}

// Close leaves the node's stores consistent and stops it. Nothing of the
// node runs after Close returns.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		// raft leaves unanswered what waits in its queues when it shuts
		// down, so the node first stops proposing and waits, with raft
		// still running, for the answer to everything it asked: its
		// entries (applied, or refused when leadership is lost), its
		// barrier, its leadership confirmations.
		close(n.closing)
		n.wg.Wait()
		n.verifyMu.Lock() // confirmations under way end; later ones see closing
		err := n.raft.Shutdown().Error()
		n.verifyMu.Unlock()
		close(n.stopped)
		n.fsm.close()
		n.closeErr = errors.Join(err, n.closeAll())
	})
	return n.closeErr
}

// closeAll closes the stores and the transport the node opened.
func (n *Node) closeAll() error {
	var errs []error
	for _, c := range slices.Backward(n.closers) {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

func (n *Node) notLeader(op string) error {
	id, addr := n.Leader()
	return &NotLeaderError{Op: op, LeaderID: id, LeaderAddress: addr}
}

// raftError maps an error of raft for operation op.
func (n *Node) raftError(op string, err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader):
		return n.notLeader(op)
	case errors.Is(err, raft.ErrRaftShutdown):
		return closedError(op)
	case errors.Is(err, raft.ErrLeadershipLost):
		return fmt.Errorf("replicated: %s: leadership lost; the command may or may not have been committed: %w", op, err)
	}
	return fmt.Errorf("replicated: %s: %w", op, err)
}
