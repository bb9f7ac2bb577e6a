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
	"crypto/tls"
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
	// Transport carries raft traffic. When nil, the node's own transport
	// listens on Bind, secured by TLS (or plain TCP when Insecure), and
	// also carries the calls followers forward to the leader. A caller's
	// Transport is the caller's to secure; TLS and Insecure must then be
	// unset, and the node does not forward.
	Transport raft.Transport
	// Bind is the TCP address the node's transport listens on when
	// Transport is nil; other nodes dial it as the node's Server.Address.
	Bind string
	// TLS secures the node's transport with mutual TLS: every connection,
	// either way, presents a certificate that the other side verifies.
	// It needs the node's certificate (Certificates, or GetCertificate and
	// GetClientCertificate) and the cluster's CA (RootCAs, which also
	// verifies the peers dialling in unless ClientCAs is set). A dialled
	// peer's certificate must name the host of its address (an IP SAN for
	// an IP address) unless ServerName is set. The node requires and
	// verifies client certificates whatever ClientAuth says. Certificates
	// from GetCertificate, GetClientCertificate or GetConfigForClient are
	// asked for on every new connection, so they can rotate without a
	// restart. The node keeps a clone.
	TLS *tls.Config
	// NoForward makes a follower answer writes and linearizable reads
	// with a *NotLeaderError instead of forwarding them to the leader.
	// Without it a node forwards them over its own transport, so any node
	// serves any call; with a caller's Transport it never forwards.
	NoForward bool
	// Insecure runs the node's transport on plain TCP: anyone who can
	// reach Bind can join the cluster and read and change every lease.
	// Open refuses a Config with neither TLS nor Insecure.
	Insecure bool
	// Bootstrap lists the initial members. A node whose Dir holds no state
	// bootstraps the cluster with them; a node with state ignores it.
	Bootstrap []Server
	// Raft tunes hashicorp/raft. Nil uses defaults suited to a LAN.
	Raft *raft.Config
	// Options configure the lease.Service each node applies the log to
	// (TTL bounds, capacities). Clocks are the node's own: WithClock is
	// refused. An option lease.New refuses is refused by Open, the Field
	// of its error naming it within Options ("Options.WithTTLBounds").
	Options []lease.Option

	// stores, when set (by tests), replaces the bolt and file stores in Dir.
	stores func() (raft.LogStore, raft.StableStore, raft.SnapshotStore)
	// onTerm, when set (by tests), is called when a term of this node
	// becomes ready to serve or ends.
	onTerm func()
	// onServe, when set (by tests), is called as the node starts serving
	// a forwarded request of kind with body, on the connection's goroutine.
	onServe func(n *Node, kind byte, body []byte)
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

// Node is one member of a replicated lease service. It implements
// lease.Backend. Writes go to the leader; a write whose leader lost its
// place while committing it is settled before it returns (its result, or
// sent again when it was not committed), and fails with ErrOutcomeUnknown
// only when the context ends first. Reads are linearizable (served by
// the leader) unless made through Stale. A linearizable read
// that finds a lease's expiry passed by the leader's clock first commits
// an entry that ends it, so it never shows a lease past its expiry. A Node is safe for
// concurrent use.
type Node struct {
	id        string
	fwd       *forwarder // nil when the node does not forward
	raft      *raft.Raft
	logs      raft.LogStore // raft's log, read to settle uncertain writes
	stream    *streamLayer  // the node's own transport; nil with Config.Transport
	fsm       *fsm
	closers   []io.Closer // stores and the transport the node opened
	notify    chan bool   // raft's leadership changes
	queue     chan *request
	tickCh    chan time.Time // the deadline the expiry loop wants ended; capacity 1
	inflight  chan *flight
	slots     chan struct{} // the batcher's pipeline slots: one per entry of commands in flight
	clockMove chan struct{} // the earliest deadline may have moved; capacity 1

	keys *proposalKeys // the keys of the entries the batcher proposes
	// uncertainEntries counts the entries of commands raft answered with
	// ErrLeadershipLost, whose callers settled their outcome (tests read it).
	uncertainEntries atomic.Int64

	term        atomic.Pointer[term] // the leadership term under way; nil when not leader
	termMu      sync.Mutex           // orders term starts with currentTerm's waits
	termStarted chan struct{}        // closed when a term starts; nil when nobody waits
	onTerm      func()
	onServe     func(n *Node, kind byte, body []byte)

	verifyMu sync.RWMutex // held for reading by leadership confirmations

	subsMu sync.Mutex
	subs   atomic.Pointer[[]*endSub]

	kaMu sync.Mutex // guards kas; orders KeepAlive with Close
	kas  map[lease.ID][]*keepAlive
	kaWG sync.WaitGroup // the keep-alive goroutines

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
	// pipelineDepth bounds the entries of commands in flight: two, as
	// many as raft's two stages (the leader's log write, then a
	// follower's). Deeper pipelines measured slower: more, smaller
	// entries, each with raft's own costs.
	pipelineDepth = 2
	// inflightCap bounds every entry in flight, ticks included; a tick
	// takes no pipeline slot, so that an expiry is not queued behind
	// batches of commands.
	inflightCap = 64
	// logCacheSize is how many of the latest log entries a node keeps in
	// memory for raft to send to followers: as many as raft sends in one
	// append (its default MaxAppendEntries).
	logCacheSize = 64
)

// Open starts a node: it opens (or creates) its stores in cfg.Dir, joins the
// raft cluster and returns once the node is running (not necessarily
// leader; Ready waits for that). Without a Transport the node listens on
// Bind with mutual TLS (cfg.TLS), or plain TCP when cfg.Insecure says so;
// a Config with neither is refused, naming TLS. Bad configuration gets a *lease.Error with CodeInvalidArgument
// naming the field; so does a Dir that another node, in this process or
// another, holds open (Field "Dir", at once, without waiting for it).
//
// Raft settings the node cannot honour are refused, naming the field:
// NotifyCh (the node consumes leadership changes itself; use
// Raft().LeaderCh or RegisterObserver), NoSnapshotRestoreOnStart (the
// node's state is rebuilt from its latest snapshot when it starts),
// RestoreCommittedLogs (the log store does not track commits), a LocalID
// other than ID, a ProtocolVersion below 3 and an unknown LogLevel. The
// node turns raft's BatchApplyCh on (its batcher is the only proposer).
// Without a Logger, raft, the transport and the snapshot store log to
// LogOutput (stderr when nil) at LogLevel (warnings and errors when both
// are empty, or Raft is nil).
// The raft log is a write-ahead log in Dir/wal that syncs every append;
// raft.db (bolt) keeps raft's term and vote. A log an earlier release kept
// in raft.db is moved to Dir/wal when the node opens. Stores in Dir that
// cannot be opened or read, a damaged log included, get a *lease.Error
// with lease.CodeStorage whose Detail names Dir; Open does not panic on
// them.
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
		keys:      newProposalKeys(),
		slots:     make(chan struct{}, pipelineDepth),
		clockMove: make(chan struct{}, 1),
		closing:   make(chan struct{}),
		stopped:   make(chan struct{}),
		onTerm:    cfg.onTerm,
		onServe:   cfg.onServe,
		id:        cfg.ID,
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
			return storageError(cfg.Dir, "stable store", err)
		}
		n.closers = append(n.closers, bolt)
		log, err := openLog(cfg.Dir, bolt, rc.Logger)
		if err != nil {
			return storageError(cfg.Dir, "log store", err)
		}
		n.closers = append(n.closers, log)
		// Raft reads back every entry it sends a follower; the cache
		// answers those reads from memory for the latest entries.
		cache, err := raft.NewLogCache(logCacheSize, log)
		if err != nil {
			return fmt.Errorf("replicated: open: log cache: %w", err)
		}
		logs, stable = cache, bolt
		fss, err := raft.NewFileSnapshotStoreWithLogger(cfg.Dir, 2, rc.Logger)
		if err != nil {
			return storageError(cfg.Dir, "snapshot store", err)
		}
		snaps = fss
	}
	trans := cfg.Transport
	if trans == nil {
		stream, err := listen(cfg.Bind, cfg.TLS)
		if err != nil {
			return fmt.Errorf("replicated: open: transport: %w", err)
		}
		// No pipelined replication (MaxRPCsInFlight 1): raft's pipeline
		// can wedge when a follower refuses an append (as during a
		// leadership transfer under load), after which Shutdown never
		// returns. Our batches already carry many commands per append,
		// and the renew and grant benchmarks show no cost without it.
		net := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
			Stream: stream, MaxPool: 3, MaxRPCsInFlight: 1, Timeout: 10 * time.Second, Logger: rc.Logger,
		})
		n.closers = append(n.closers, closerFunc(func() error {
			net.CloseStreams() // closing our connections ends the peers' handlers of them
			err := errors.Join(net.Close(), stream.Close())
			// raft's transport ends its accept loop a moment after Close
			// returns: let go of the node (raft, through the heartbeat
			// handler raft set), so that its state is garbage at once.
			net.SetHeartbeatHandler(nil)
			return err
		}))
		n.stream = stream
		trans = net
	}
	n.fsm = newFSM(cfg.Options, n.dispatchEnd, n.clockMoved)
	n.logs = logs
	r, err := startRaft(cfg, rc, n.fsm, logs, stable, snaps, trans)
	if err != nil {
		return err
	}
	n.raft = r
	if n.stream != nil {
		if !cfg.NoForward {
			n.fwd = newForwarder(n, n.stream)
		}
		n.stream.start(n.serveForward)
	}
	return nil
}

// startRaft bootstraps the cluster when cfg asks for it and the stores
// hold no state, then starts raft on the stores. raft reads the whole log
// as it starts and panics on an entry it cannot read; that panic, and every
// failure of the stores, becomes a storage error naming cfg.Dir. raft
// starts its goroutines only after that read, so nothing of it runs after
// a panic.
func startRaft(cfg Config, rc *raft.Config, f raft.FSM, logs raft.LogStore, stable raft.StableStore, snaps raft.SnapshotStore, trans raft.Transport) (r *raft.Raft, err error) {
	defer func() {
		if v := recover(); v != nil {
			r, err = nil, storageError(cfg.Dir, "raft log", fmt.Errorf("reading it: %v", v))
		}
	}()
	existing, err := raft.HasExistingState(logs, stable, snaps)
	if err != nil {
		return nil, storageError(cfg.Dir, "raft stores", err)
	}
	if !existing && len(cfg.Bootstrap) > 0 {
		var conf raft.Configuration
		for _, s := range cfg.Bootstrap {
			conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(s.ID), Address: raft.ServerAddress(s.Address)})
		}
		if err := raft.BootstrapCluster(rc, logs, stable, snaps, trans, conf); err != nil {
			return nil, storageError(cfg.Dir, "bootstrap", err)
		}
	}
	// Open validated the configuration, so what raft refuses now is what
	// it read from the stores.
	r, err = raft.NewRaft(rc, f, logs, stable, snaps, trans)
	if err != nil {
		return nil, storageError(cfg.Dir, "raft stores", err)
	}
	return r, nil
}

// storageError reports stores in dir (what names which) that the node
// cannot open or read: a *lease.Error with lease.CodeStorage, Op "open",
// whose Detail names dir and says what failed; it also matches cause.
// With test stores (no Dir) it names none.
func storageError(dir, what string, cause error) error {
	detail := what + ": " + cause.Error()
	if dir != "" {
		detail = "directory " + dir + ": " + detail
	}
	return &causedError{le: &lease.Error{Package: "replicated", Code: lease.CodeStorage, Op: "open", Detail: detail}, cause: cause}
}

// causedError is a *lease.Error that also matches the error that caused
// it (errors.Is and errors.As see both, the *lease.Error first). It is
// read-only once made.
type causedError struct {
	le    *lease.Error
	cause error
}

// Error is the *lease.Error's text.
func (e *causedError) Error() string { return e.le.Error() }

// Unwrap returns the *lease.Error, then the cause.
func (e *causedError) Unwrap() []error { return []error{e.le, e.cause} }

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
	if err := validateSecurity(cfg); err != nil {
		return err
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
	svc, err := lease.New(append([]lease.Option{lease.WithClock(probe)}, cfg.Options...)...)
	if err != nil {
		// Named after the option within Options, as lease.New names it.
		var le *lease.Error
		if errors.As(err, &le) && le.Field != "" {
			return invalid("Options."+le.Field, le.Detail)
		}
		return invalid("Options", err.Error())
	}
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
	r := n.write(ctx, command{op: opGrant, holder: holder, purpose: purpose, ttl: ttl})
	return r.lease, r.err
}

// GrantWithKey is lease.Service.GrantWithKey, committed by the cluster.
func (n *Node) GrantWithKey(ctx context.Context, holder string, purpose lease.Purpose, ttl time.Duration, key string, value []byte) (lease.Lease, error) {
	r := n.write(ctx, command{op: opGrantWithKey, holder: holder, purpose: purpose, ttl: ttl, key: key, value: value})
	return r.lease, r.err
}

// Renew is lease.Service.Renew, committed by the cluster.
func (n *Node) Renew(ctx context.Context, id lease.ID) (lease.Lease, error) {
	r := n.write(ctx, command{op: opRenew, id: id})
	return r.lease, r.err
}

// RenewTTL is lease.Service.RenewTTL, committed by the cluster: the lease's
// TTL becomes ttl and it expires ttl after the renewal's instant.
func (n *Node) RenewTTL(ctx context.Context, id lease.ID, ttl time.Duration) (lease.Lease, error) {
	r := n.write(ctx, command{op: opRenewTTL, id: id, ttl: ttl})
	return r.lease, r.err
}

// Revoke is lease.Service.Revoke, committed by the cluster.
func (n *Node) Revoke(ctx context.Context, id lease.ID) (lease.Lease, error) {
	r := n.write(ctx, command{op: opRevoke, id: id})
	return r.lease, r.err
}

// Put is lease.Service.Put, committed by the cluster.
func (n *Node) Put(ctx context.Context, key string, value []byte, id lease.ID) error {
	return n.write(ctx, command{op: opPut, key: key, value: value, id: id}).err
}

// Delete is lease.Service.Delete, committed by the cluster.
func (n *Node) Delete(ctx context.Context, key string) (bool, error) {
	r := n.write(ctx, command{op: opDelete, key: key})
	return r.ok, r.err
}

// Leader returns the current leader's ID and address, empty when none is
// known.
func (n *Node) Leader() (id, address string) {
	addr, sid := n.raft.LeaderWithID()
	return string(sid), string(addr)
}

// Raft returns the node's raft instance, for observation (membership has
// methods of its own: AddVoter, RemoveServer, ...). Applying to it
// directly bypasses the service.
func (n *Node) Raft() *raft.Raft { return n.raft }

// OnEnd subscribes fn to the endings of leases (expired or revoked) that
// this node applies, leader or follower, in the order the log ends them. fn
// runs on the node's apply goroutine, outside every lock, with a Lease of
// its own (Keys are the keys deleted); it delays the node's applies while it
// runs, so keep it short. A panic in fn is recovered and reported like one
// in a lease.Service subscriber, and the other subscribers still see the
// ending. fn is not called after stop returns, unless a call is under way,
// nor after Close returns. A nil fn subscribes nothing: the stop returned
// does nothing.
//
// A node that catches up by installing a snapshot takes the state it
// carries without applying the entries it skips: endings among those are
// not reported on that node (the leader, which applied them, reported
// them).
func (n *Node) OnEnd(fn func(l lease.Lease, reason lease.EndReason)) (stop func()) {
	if fn == nil {
		return func() {}
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
	n.endKeepAlives(l.ID, reason)
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
		if n.fwd != nil {
			n.fwd.close() // forwarded calls under way fail now
		}
		n.kaMu.Lock()
		// A KeepAlive under way has registered by now, or sees closing.
		n.kaMu.Unlock() //lint:ignore SA2001 the lock orders Close after registrations
		n.wg.Wait()
		n.verifyMu.Lock() // confirmations under way end; later ones see closing
		err := n.raft.Shutdown().Error()
		n.verifyMu.Unlock()
		close(n.stopped)
		n.kaWG.Wait() // their renewals have been answered: nothing waits on raft
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
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		// Refused before entering the log: safe to send to the leader,
		// which a transfer under way is about to change.
		return n.notLeader(op)
	case errors.Is(err, raft.ErrRaftShutdown):
		return closedError(op)
	case errors.Is(err, raft.ErrLeadershipLost):
		return uncertain(op)
	}
	return fmt.Errorf("replicated: %s: %w", op, err)
}

var _ lease.Backend = (*Node)(nil)
