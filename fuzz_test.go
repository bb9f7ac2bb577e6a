package lease_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// An input to FuzzService is one configuration byte followed by operations,
// each an opcode byte and its argument bytes; bytes past the end read as 0.
const (
	fzGrant = iota
	fzGrantWithKey
	fzRenew
	fzRenewTTL
	fzUse
	fzRevoke
	fzInfo
	fzPut
	fzDelete
	fzKeepAlive
	fzStopKeepAlive // cancel the parent context of a keep-alive
	fzAdvance
	fzAdvanceToDue // advance exactly to the next deadline, or just short of it
	fzScan
	fzGrantTwice // two grants with equal deadlines
	fzRare       // close, or unsubscribe the OnEnd subscriber
	fzOpCount
)

// Configuration bits.
const (
	fzCfgDeaf        = 1 << iota // the clock never fires timers: only calls settle
	fzCfgEnded1                  // ended record of 1 instead of 3
	fzCfgEnded0                  // ended record of 0 (wins over fzCfgEnded1)
	fzCfgOnExpire                // an expiry subscriber (onExpired)
	fzCfgSubscribe               // OnEnd subscriber
	fzCfgSmallAudit              // WithAuditCapacity(5)
	fzCfgTTLBounds               // WithTTLBounds(2ns, 500ns)
	fzCfgCanceledCtx             // some calls get a cancelled context
)

var (
	fzHolders  = []string{"", "alice", "bob", "carol"}
	fzKeys     = []string{"", "a", "a/1", "a/2", "b"}
	fzPrefixes = []string{"", "a", "a/", "b", "c"}
	fzTTLs     = []time.Duration{-1, 0, 1, 2, 3, 4, 5, 9, 10, 30, 100, 501}
	fzAdvances = []time.Duration{0, 1, 2, 3, 5, 10, 33, 100, 1000}
)

// fzCancelBit in an opcode byte gives the call a cancelled context when the
// configuration has fzCfgCanceledCtx.
const fzCancelBit = 0x80

// fzMaxOps and fzDecisionBudget bound one input so that it runs fast: an
// Advance that would make keep-alives renew past the budget is skipped.
const (
	fzMaxOps         = 200
	fzDecisionBudget = 2000
)

// FuzzService runs random operation sequences on a Service with a FakeClock
// and on refModel, and compares every result, the observable state after
// every operation, the audit trail and the ending notifications.
func FuzzService(f *testing.F) {
	for _, seed := range fzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// A bubble, so that the goroutines context.AfterFunc starts for
		// cancelled keep-alives must be gone when the input is done.
		synctest.Test(t, func(t *testing.T) { newFuzzRun(t, data).run() })
	})
}

// fzSeeds are hand-written inputs for the interesting paths.
func fzSeeds() [][]byte {
	in := func(cfg byte, ops ...byte) []byte { return append([]byte{cfg}, ops...) }
	const all = fzCfgOnExpire | fzCfgSubscribe
	return [][]byte{
		// Grant, use with each purpose, renew, advance to the deadline, stale use.
		in(all, fzGrant, 1, 1, 8, fzUse, 1, 1, fzUse, 1, 2, fzRenew, 1, fzAdvanceToDue, 0, fzUse, 1, 1, fzRenew, 1, fzInfo, 1),
		// Keys: put, move between leases, revoke deletes exactly its keys.
		in(all, fzGrant, 1, 1, 9, fzGrant, 2, 2, 9, fzPut, 1, 1, fzPut, 2, 1, fzPut, 3, 2, fzPut, 1, 2, fzPut, 4, 0,
			fzRevoke, 2, fzRevoke, 2, fzScan, 0, 0, fzAdvance, 8, fzDelete, 4, fzDelete, 4),
		// Keep-alive outlives its TTL, then stops when the parent is cancelled.
		in(all, fzGrant, 1, 1, 5, fzKeepAlive, 1, fzAdvance, 7, fzAdvance, 7, fzStopKeepAlive, 0, fzAdvanceToDue, 0, fzUse, 1, 1),
		// Two keep-alives end with the lease on revoke; TTL 1 renews before it expires.
		in(all, fzGrant, 1, 1, 2, fzKeepAlive, 1, fzKeepAlive, 1, fzAdvance, 5, fzRevoke, 1, fzStopKeepAlive, 1),
		// RenewTTL on a kept-alive lease moves its renewals.
		in(all, fzGrant, 1, 1, 8, fzKeepAlive, 1, fzRenewTTL, 1, 10, fzAdvance, 6, fzAdvanceToDue, 1, fzAdvanceToDue, 0,
			fzStopKeepAlive, 0, fzAdvance, 7),
		// Equal deadlines end in ID order; the ended record forgets old leases.
		in(all|fzCfgEnded1, fzGrantTwice, 8, fzGrantTwice, 8, fzAdvanceToDue, 0, fzRenew, 1, fzRevoke, 2, fzRevoke, 4,
			fzUse, 1, 1, fzUse, 4, 2, fzInfo, 1, fzInfo, 4, fzInfo, 5),
		// Without timers, calls settle what is due, keep-alives included.
		in(all|fzCfgDeaf, fzGrant, 1, 1, 5, fzGrant, 1, 2, 7, fzPut, 1, 2, fzAdvance, 4, fzInfo, 1, fzKeepAlive, 2,
			fzAdvance, 8, fzScan, 0, 0, fzStopKeepAlive, 0, fzAdvance, 8),
		// GrantWithKey: create-if-absent.
		in(all|fzCfgEnded0, fzGrantWithKey, 1, 1, 8, 1, fzGrantWithKey, 2, 1, 8, 1, fzGrantWithKey, 2, 1, 8, 0, fzAdvanceToDue, 0,
			fzGrantWithKey, 2, 1, 8, 1, fzRevoke, 2, fzRevoke, 1),
		// Bad input everywhere, then close.
		in(all|fzCfgTTLBounds|fzCfgSmallAudit, fzGrant, 0, 1, 8, fzGrant, 1, 0, 8, fzGrant, 1, 1, 0, fzGrant, 1, 4, 2,
			fzRenewTTL, 0, 11, fzPut, 0, 0, fzDelete, 0, fzGrant, 1, 1, 3, fzKeepAlive, 1, fzRare, 0,
			fzGrant, 1, 1, 8, fzRenew, 1, fzGrant, 0, 1, 8, fzAdvance, 8),
		// Cancelled contexts and an unsubscribed subscriber.
		in(all|fzCfgCanceledCtx|fzCfgEnded1, fzGrant, 1, 1, 8, fzGrant|fzCancelBit, 1, 1, 8, fzRare, 1,
			fzRevoke|fzCancelBit, 1, fzRevoke, 1, fzRenew|fzCancelBit, 2, fzAdvance, 8),
	}
}

// fuzzRun drives one input through the service and the model.
type fuzzRun struct {
	t     *testing.T
	in    []byte
	pos   int
	cfg   refConfig
	clk   *leasetest.FakeClock
	svc   *lease.Service
	model *refModel

	canceled bool // some calls get a cancelled context
	trace    []string
	step     int

	mu        sync.Mutex // guards what hooks and the sink record
	decisions []refDecision
	endings   []refEnding
	expirings []refSnap
	stopSub   func()
	checked   [3]int // how much of each log checkNotifications has compared

	handles []fuzzHandle // parallel to model.handles
}

type fuzzHandle struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func newFuzzRun(t *testing.T, in []byte) *fuzzRun {
	r := &fuzzRun{t: t, in: in}
	c := r.byte()
	r.cfg = refConfig{
		minTTL: 1, maxTTL: 1<<63 - 1,
		endedCapacity: 3, auditCapacity: lease.DefaultAuditCapacity,
		onExpire:  c&fzCfgOnExpire != 0,
		subscribe: c&fzCfgSubscribe != 0,
		timers:    c&fzCfgDeaf == 0,
	}
	switch {
	case c&fzCfgEnded0 != 0:
		r.cfg.endedCapacity = 0
	case c&fzCfgEnded1 != 0:
		r.cfg.endedCapacity = 1
	}
	if c&fzCfgSmallAudit != 0 {
		r.cfg.auditCapacity = 5
	}
	if c&fzCfgTTLBounds != 0 {
		r.cfg.minTTL, r.cfg.maxTTL = 2, 500
	}
	r.canceled = c&fzCfgCanceledCtx != 0
	r.model = newRefModel(r.cfg)
	r.clk = leasetest.NewFakeClock(refEpoch)

	var clock lease.Clock = r.clk
	if !r.cfg.timers {
		clock = leasetest.Stalled(r.clk)
	}
	opts := []lease.Option{
		lease.WithClock(clock),
		lease.WithEndedCapacity(r.cfg.endedCapacity),
		lease.WithAuditCapacity(r.cfg.auditCapacity),
		auditFunc(func(d lease.Decision) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.decisions = append(r.decisions, fzDecision(d))
		}),
	}
	if c&fzCfgTTLBounds != 0 {
		opts = append(opts, lease.WithTTLBounds(r.cfg.minTTL, r.cfg.maxTTL))
	}
	r.svc = lease.Must(lease.New(opts...))
	if r.cfg.onExpire {
		onExpired(r.svc, func(l lease.Lease) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.expirings = append(r.expirings, fzSnap(l))
		})
	}
	if r.cfg.subscribe {
		r.stopSub = r.svc.OnEnd(func(l lease.Lease, reason lease.EndReason) {
			// Called outside the lock, so it may call back in.
			_, err := r.svc.Info(ctx, l.ID)
			r.mu.Lock()
			defer r.mu.Unlock()
			r.endings = append(r.endings, refEnding{Lease: fzSnap(l), Reason: reason, InfoCode: lease.CodeOf(err)})
		})
	}
	return r
}

func (r *fuzzRun) byte() byte {
	if r.pos >= len(r.in) {
		return 0
	}
	b := r.in[r.pos]
	r.pos++
	return b
}

func (r *fuzzRun) pick(n int) int { return int(r.byte()) % n }

// id picks 0, an issued ID, or the next unissued one.
func (r *fuzzRun) id() lease.ID { return lease.ID(r.byte()) % (r.model.lastID + 2) }

// purpose picks a purpose, valid or not.
func (r *fuzzRun) purpose() lease.Purpose { return lease.Purpose(r.pick(5)) }

func (r *fuzzRun) run() {
	defer r.finish()
	for r.step = 0; r.pos < len(r.in) && r.step < fzMaxOps; r.step++ {
		r.op()
		r.observe()
	}
}

// ctx returns the context for a call, and its trace ID; cancelled if asked.
func (r *fuzzRun) ctx(canceled bool) (context.Context, string) {
	trace := fmt.Sprintf("op%d", r.step)
	ctx := lease.WithTraceID(context.Background(), trace)
	if canceled {
		c, cancel := context.WithCancel(ctx)
		cancel()
		return c, trace
	}
	return ctx, trace
}

func (r *fuzzRun) logf(format string, args ...any) {
	r.trace = append(r.trace, fmt.Sprintf("%3d t=%d ", r.step, r.model.now)+fmt.Sprintf(format, args...))
}

func (r *fuzzRun) failf(format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf("%s\noperations:\n%s", fmt.Sprintf(format, args...), strings.Join(r.trace, "\n"))
}

// equal fails the run unless want and got are equal.
func (r *fuzzRun) equal(want, got any, what string) {
	r.t.Helper()
	if !assert.ObjectsAreEqual(want, got) {
		require.Equal(r.t, want, got, "%s\noperations:\n%s", what, strings.Join(r.trace, "\n"))
	}
}

// checkErr compares a returned error with the model's.
func (r *fuzzRun) checkErr(want *refErr, got error, what string) {
	r.t.Helper()
	if want == nil {
		if got != nil {
			r.failf("%s: got error %v, want none", what, got)
		}
		return
	}
	var le *lease.Error
	if !errors.As(got, &le) {
		r.failf("%s: got error %v, want a *lease.Error with %s", what, got, want.Code)
	}
	if want.Code == lease.CodeInvalidArgument && le.Code == lease.CodeClosed && r.model.closed {
		return // the contract allows both; it does not say which check comes first
	}
	if le.Code != want.Code {
		r.failf("%s: got %v, want %s", what, got, want.Code)
	}
	if !errors.Is(got, fzSentinel(want.Code)) {
		r.failf("%s: %v does not match the sentinel of %s", what, got, want.Code)
	}
	switch want.Code {
	case lease.CodeInvalidArgument:
		if !slices.Contains(want.Fields, le.Field) {
			r.failf("%s: %v names field %q, want one of %q", what, got, le.Field, want.Fields)
		}
	case lease.CodeClosed:
	default:
		if le.LeaseID != want.LeaseID {
			r.failf("%s: %v has LeaseID %d, want %d", what, got, le.LeaseID, want.LeaseID)
		}
	}
}

// checkCanceled checks a call made with a cancelled context: it must fail
// with the context's error, or with the error its arguments or a closed
// service earn (the contract does not order the checks), and change nothing.
func (r *fuzzRun) checkCanceled(err error, bad *refErr, what string) {
	r.t.Helper()
	switch code := lease.CodeOf(err); {
	case errors.Is(err, context.Canceled):
	case bad != nil && code == bad.Code:
	case r.model.closed && code == lease.CodeClosed:
	default:
		r.failf("%s with a cancelled context: got %v, want context.Canceled", what, err)
	}
}

// fzKeyArg is the error a key argument earns on its own.
func fzKeyArg(key string) *refErr {
	if key == "" {
		return refInvalid("key")
	}
	return nil
}

func fzSentinel(c lease.Code) error {
	return map[lease.Code]error{
		lease.CodeExpired:         lease.ErrExpired,
		lease.CodeStaleUse:        lease.ErrStaleUse,
		lease.CodeAlreadyRevoked:  lease.ErrAlreadyRevoked,
		lease.CodePurposeMismatch: lease.ErrPurposeMismatch,
		lease.CodeNotFound:        lease.ErrNotFound,
		lease.CodeInvalidArgument: lease.ErrInvalidArgument,
		lease.CodeClosed:          lease.ErrClosed,
		lease.CodeKeyExists:       lease.ErrKeyExists,
	}[c]
}

func fzOffset(t time.Time) int64 { return int64(t.Sub(refEpoch)) }

func fzSnap(l lease.Lease) refSnap {
	return refSnap{
		ID: l.ID, Holder: l.Holder, Purpose: l.Purpose, TTL: l.TTL,
		GrantedAt: fzOffset(l.GrantedAt), RenewedAt: fzOffset(l.RenewedAt), ExpiresAt: fzOffset(l.ExpiresAt),
		Revision: l.Revision, Keys: slices.Clone(l.Keys),
	}
}

func fzDecision(d lease.Decision) refDecision {
	return refDecision{
		LeaseID: d.LeaseID, Action: d.Action, Allowed: d.Allowed, Code: d.Code,
		Holder: d.Holder, TraceID: d.TraceID, At: fzOffset(d.Timestamp), Revision: d.Revision,
	}
}

// leaseCall makes a call that returns a lease on the service and on the
// model, and compares the results. With canceled the call gets a cancelled
// context and the model is left alone; bad is the error its arguments earn.
func (r *fuzzRun) leaseCall(what string, canceled bool, bad *refErr,
	call func(context.Context) (lease.Lease, error), model func(trace string) (refSnap, *refErr),
) {
	r.t.Helper()
	ctx, trace := r.ctx(canceled)
	got, err := call(ctx)
	if canceled {
		r.checkCanceled(err, bad, what)
		return
	}
	want, werr := model(trace)
	r.checkLease(want, werr, got, err, what)
}

// checkLease compares a returned lease and error with the model's.
func (r *fuzzRun) checkLease(want refSnap, werr *refErr, got lease.Lease, err error, what string) {
	r.t.Helper()
	r.checkErr(werr, err, what)
	if werr == nil {
		r.equal(want, fzSnap(got), what)
	}
}

// op decodes and runs one operation on both sides.
func (r *fuzzRun) op() {
	m, s := r.model, r.svc
	opb := r.byte()
	cc := r.canceled && opb&fzCancelBit != 0 // the call gets a cancelled context
	switch op := int(opb&^fzCancelBit) % fzOpCount; op {
	case fzGrant, fzGrantWithKey:
		withKey := op == fzGrantWithKey
		holder, purpose, ttl := fzHolders[r.pick(len(fzHolders))], r.purpose(), fzTTLs[r.pick(len(fzTTLs))]
		key := ""
		if withKey {
			key = fzKeys[r.pick(len(fzKeys))]
		}
		value := fmt.Sprintf("v%d", r.step)
		r.logf("grant(%q, %v, %v) withKey=%v key=%q canceled=%v", holder, purpose, ttl, withKey, key, cc)
		r.leaseCall("grant", cc, m.grantArgs(holder, purpose, ttl, withKey, key),
			func(ctx context.Context) (lease.Lease, error) {
				if withKey {
					return s.GrantWithKey(ctx, holder, purpose, ttl, key, []byte(value))
				}
				return s.Grant(ctx, holder, purpose, ttl)
			},
			func(trace string) (refSnap, *refErr) {
				return m.grant(holder, purpose, ttl, withKey, key, value, trace)
			})
	case fzGrantTwice:
		ttl := fzTTLs[r.pick(len(fzTTLs))]
		r.logf("grant twice, ttl %v", ttl)
		for range 2 {
			r.leaseCall("grant twice", false, nil,
				func(ctx context.Context) (lease.Lease, error) { return s.Grant(ctx, "dave", lease.StateWrite, ttl) },
				func(trace string) (refSnap, *refErr) {
					return m.grant("dave", lease.StateWrite, ttl, false, "", "", trace)
				})
		}
	case fzRenew:
		id := r.id()
		r.logf("renew(%d) canceled=%v", id, cc)
		r.leaseCall("renew", cc, nil,
			func(ctx context.Context) (lease.Lease, error) { return s.Renew(ctx, id) },
			func(trace string) (refSnap, *refErr) { return m.renew(id, false, 0, trace) })
	case fzRenewTTL:
		id, ttl := r.id(), fzTTLs[r.pick(len(fzTTLs))]
		r.logf("renewTTL(%d, %v) canceled=%v", id, ttl, cc)
		var bad *refErr
		if !m.ttlOK(ttl) {
			bad = refInvalid("ttl")
		}
		r.leaseCall("renewTTL", cc, bad,
			func(ctx context.Context) (lease.Lease, error) { return s.RenewTTL(ctx, id, ttl) },
			func(trace string) (refSnap, *refErr) { return m.renew(id, true, ttl, trace) })
	case fzUse:
		id, purpose := r.id(), r.purpose()
		r.logf("use(%d, %v) canceled=%v", id, purpose, cc)
		var bad *refErr
		if !purpose.Valid() {
			bad = refInvalid("purpose")
		}
		r.leaseCall("use", cc, bad,
			func(ctx context.Context) (lease.Lease, error) { return s.Use(ctx, id, purpose) },
			func(trace string) (refSnap, *refErr) { return m.use(id, purpose, trace) })
	case fzRevoke:
		id := r.id()
		r.logf("revoke(%d) canceled=%v", id, cc)
		r.leaseCall("revoke", cc, nil,
			func(ctx context.Context) (lease.Lease, error) { return s.Revoke(ctx, id) },
			func(trace string) (refSnap, *refErr) { return m.revoke(id, trace) })
	case fzInfo:
		id := r.id()
		r.logf("info(%d)", id)
		got, err := s.Info(ctx, id)
		want, werr := m.info(id)
		r.checkLease(want, werr, got, err, "info")
	case fzPut:
		key, id := fzKeys[r.pick(len(fzKeys))], r.id()
		value := fmt.Sprintf("v%d", r.step)
		ctx, _ := r.ctx(cc)
		r.logf("put(%q, %q, %d) canceled=%v", key, value, id, cc)
		buf := []byte(value)
		err := s.Put(ctx, key, buf, id)
		buf[0] = 'X' // the service must have copied it
		if cc {
			r.checkCanceled(err, fzKeyArg(key), "put")
			return
		}
		r.checkErr(m.put(key, value, id), err, "put")
	case fzDelete:
		key := fzKeys[r.pick(len(fzKeys))]
		ctx, _ := r.ctx(cc)
		r.logf("delete(%q) canceled=%v", key, cc)
		got, err := s.Delete(ctx, key)
		if cc {
			r.checkCanceled(err, fzKeyArg(key), "delete")
			return
		}
		want, werr := m.del(key)
		r.checkErr(werr, err, "delete")
		r.equal(want, got, "delete found")
	case fzKeepAlive:
		id := r.id()
		trace := fmt.Sprintf("ka%d", r.step)
		parent, cancel := context.WithCancel(lease.WithTraceID(context.Background(), trace))
		if cc {
			cancel()
		}
		r.logf("keepAlive(%d) canceled=%v -> handle %d", id, cc, len(r.handles))
		kctx, err := s.KeepAlive(parent, id)
		if cc {
			cancel() // already done; vet wants to see it on this path
			r.checkCanceled(err, nil, "keepAlive")
			return
		}
		i, werr := m.keepAlive(id, trace)
		r.checkErr(werr, err, "keepAlive")
		if werr != nil {
			cancel()
			return
		}
		if i != len(r.handles) {
			r.failf("model handle %d, harness handle %d", i, len(r.handles))
		}
		r.handles = append(r.handles, fuzzHandle{ctx: kctx, cancel: cancel})
	case fzStopKeepAlive:
		b := r.byte()
		if len(r.handles) == 0 {
			r.logf("stop keep-alive: none")
			return
		}
		i := int(b) % len(r.handles)
		r.logf("stop keep-alive handle %d", i)
		r.handles[i].cancel()
		// The service's parent-done callback settles what fell due before
		// the cancel; let it run so the outcome does not depend on when it
		// is scheduled. Without it renewals stop at once all the same.
		synctest.Wait()
		m.stopKeepAlive(i)
	case fzAdvance:
		d := fzAdvances[r.pick(len(fzAdvances))]
		if len(m.decisions)+m.renewalsWithin(d) > fzDecisionBudget {
			r.logf("advance(%v) skipped: too many keep-alive renewals", d)
			return
		}
		r.logf("advance(%v)", d)
		r.clk.Advance(d)
		m.advance(d)
	case fzAdvanceToDue:
		short := r.byte()&1 != 0
		d := time.Duration(1)
		if l := m.nextDue(); l != nil && m.due(l) > m.now {
			d = time.Duration(m.due(l) - m.now)
		}
		if short {
			d--
		}
		r.logf("advance to next deadline (short=%v): %v", short, d)
		r.clk.Advance(d)
		m.advance(d)
	case fzScan:
		prefix, limit := fzPrefixes[r.pick(len(fzPrefixes))], r.pick(3)
		r.logf("scan(%q, %d)", prefix, limit)
		r.equal(m.scan(prefix, limit), fzNilIfEmpty(r.scan(prefix, limit)), "scan")
	case fzRare:
		if r.byte()%2 == 0 {
			r.logf("close")
			require.NoError(r.t, s.Close())
			m.close()
			return
		}
		r.logf("unsubscribe")
		if r.stopSub != nil {
			r.stopSub()
			r.stopSub = nil
			m.subscribed = false
		}
	}
}

// scan is the service's Scan, its error checked by checkRead.
func (r *fuzzRun) scan(prefix string, limit int) []lease.KeyValue {
	kvs, err := r.svc.Scan(ctx, prefix, limit)
	r.checkRead(err, fmt.Sprintf("Scan(%q, %d)", prefix, limit))
	return kvs
}

// checkRead checks the error of a read (List, Get, Scan): LS_CLOSED once
// the service is closed, and none before.
func (r *fuzzRun) checkRead(err error, what string) {
	switch {
	case r.model.closed && lease.CodeOf(err) != lease.CodeClosed:
		r.failf("%s on a closed service: %v, want LS_CLOSED", what, err)
	case !r.model.closed && err != nil:
		r.failf("%s: %v", what, err)
	}
}

func fzNilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// observe compares everything observable after an operation.
func (r *fuzzRun) observe() {
	m, s := r.model, r.svc
	r.equal(m.revision(), s.Revision(), "Revision")
	r.equal(m.activeCount(), s.ActiveCount(), "ActiveCount")
	r.checkStats()
	var list []refSnap
	lives, err := s.List(ctx)
	r.checkRead(err, "List")
	for _, l := range lives {
		list = append(list, fzSnap(l))
		if len(l.Keys) > 0 {
			l.Keys[0] = "X" // a snapshot: changing it changes nothing
		}
	}
	r.equal(m.list(), list, "List")
	for id := lease.ID(0); id <= m.lastID+1; id++ {
		got, err := s.Info(ctx, id)
		want, werr := m.info(id)
		r.checkLease(want, werr, got, err, fmt.Sprintf("Info(%d)", id))
	}
	for _, k := range fzKeys {
		value, id, ok, err := s.Get(ctx, k)
		r.checkRead(err, fmt.Sprintf("Get(%q)", k))
		wv, wid, wok := m.getKey(k)
		r.equal([]any{wok, wv, wid}, []any{ok, string(value), id}, fmt.Sprintf("Get(%q)", k))
		if len(value) > 0 {
			value[0] = 'X' // a copy: changing it changes nothing
		}
	}
	r.equal(m.scan("", 0), fzNilIfEmpty(r.scan("", 0)), "Scan")
	r.checkAudit(8)
	r.checkNotifications()
	for i, h := range r.handles {
		want := m.handles[i]
		if done := h.ctx.Err() != nil; done != want.done {
			r.failf("keep-alive handle %d: done %v, want %v", i, done, want.done)
		}
		if cause := context.Cause(h.ctx); want.done && !errors.Is(cause, want.cause) {
			r.failf("keep-alive handle %d: cause %v, want %v", i, cause, want.cause)
		}
	}
	if r.cfg.timers && !m.closed {
		// One timer, armed no later than the earliest deadline.
		if n := r.clk.Pending(); n > 1 {
			r.failf("%d timers pending, want at most 1", n)
		}
		if l := m.nextDue(); l != nil {
			at, ok := r.clk.NextDeadline()
			if !ok || fzOffset(at) > m.due(l) {
				r.failf("timer armed for %v (%v), earliest deadline %d (lease %d)", fzOffset(at), ok, m.due(l), l.id)
			}
		}
	}
}

// checkStats compares Stats with the decisions the model made: its totals
// count the allowed grants, renewals, revocations and expiries, its Live
// is ActiveCount, and its purposes add up to its totals.
func (r *fuzzRun) checkStats() {
	want := lease.Stats{Live: r.model.activeCount()}
	for _, d := range r.model.decisions {
		if !d.Allowed {
			continue
		}
		switch d.Action {
		case lease.ActionGrant:
			want.Granted++
		case lease.ActionRenew:
			want.Renewed++
		case lease.ActionRevoke:
			want.Revoked++
		case lease.ActionExpire:
			want.Expired++
		}
	}
	got := r.svc.Stats()
	var sum lease.Stats
	for _, p := range got.Purposes {
		sum.Live += p.Live
		sum.Granted += p.Granted
		sum.Renewed += p.Renewed
		sum.Revoked += p.Revoked
		sum.Expired += p.Expired
	}
	got.Purposes = nil
	r.equal(want, got, "Stats")
	r.equal(want, sum, "Stats by purpose, added up")
}

// checkAudit compares the length and the newest n (all when n < 0)
// decisions that Audit returns.
func (r *fuzzRun) checkAudit(n int) {
	want, got := r.model.audit(), r.svc.Audit()
	r.equal(len(want), len(got), "Audit length")
	if n < 0 || n > len(want) {
		n = len(want)
	}
	var tail []refDecision
	for _, d := range got[len(got)-n:] {
		tail = append(tail, fzDecision(d))
	}
	r.equal(fzNilIfEmpty(want[len(want)-n:]), tail, "Audit")
}

// checkNotifications compares what the sink and the hooks received.
func (r *fuzzRun) checkNotifications() {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.model
	fzCheckTail(r, m.decisions, r.decisions, &r.checked[0], "audit observer")
	fzCheckTail(r, m.endings, r.endings, &r.checked[1], "OnEnd notifications")
	fzCheckTail(r, m.expirings, r.expirings, &r.checked[2], "expiry notifications")
}

// fzCheckTail compares two growing logs, looking only at what was added
// since the last check.
func fzCheckTail[T any](r *fuzzRun, want, got []T, checked *int, what string) {
	r.t.Helper()
	if len(want) != len(got) || !assert.ObjectsAreEqual(want[*checked:], got[*checked:]) {
		r.equal(want, got, what)
	}
	*checked = len(want)
}

// finish stops every keep-alive and closes the service: every keep-alive
// context must then be done, no timer may be left and nothing more is
// announced.
func (r *fuzzRun) finish() {
	if r.t.Failed() {
		return
	}
	for i, h := range r.handles {
		h.cancel()
		r.model.stopKeepAlive(i)
	}
	require.NoError(r.t, r.svc.Close())
	r.model.close()
	for i, h := range r.handles {
		if h.ctx.Err() == nil {
			r.failf("keep-alive handle %d still live after Close", i)
		}
	}
	if r.cfg.timers {
		r.equal(0, r.clk.Pending(), "timers pending after Close")
	}
	r.clk.Advance(time.Hour)
	r.checkNotifications()
	r.checkAudit(-1)
}
