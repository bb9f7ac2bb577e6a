package lease_test

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/leasehold/lease"
)

// refModel is a deliberately naive reference implementation of the lease
// service contract of docs/semantics.md, used by FuzzService. It keeps every lease ever
// granted in a slice, finds the next deadline by a linear scan and spells out
// every state; it has no heap, no lazy deadlines and no timers, so it shares
// no cleverness (and hopefully no bugs) with the real Service.
//
// Times are nanoseconds since refEpoch, the fake clock's start, which is also
// the service's epoch.
//
// Where the contract is silent the model makes these choices:
//   - Bad input gets LS_INVALID_ARGUMENT and records no Decision ("nothing
//     changes"). On a closed service LS_CLOSED is accepted too: the contract
//     asks for both and does not say which check comes first.
//   - Use with an invalid purpose is bad input (LS_INVALID_ARGUMENT, field
//     "purpose"), as the contract says for every invalid purpose.
//   - A keep-alive renewal is settled like an expiry: it happens at the
//     instant it was due (every max(TTL/3, 1ns) from the last renewal),
//     however late the service gets to it (a late timer, or a clock whose
//     timers never fire). A renewal due at the same instant as the lease's
//     expiry wins. It is audited as an allowed renew at that instant,
//     carrying the trace ID of the oldest live KeepAlive call of the lease.
//     A service that gets to a lease several intervals late makes one
//     renewal, at the last instant one was due, not one per interval.
//   - Cancelling a keep-alive's parent stops its renewals at once, even those
//     that were due but not yet settled: the lease then expires at the
//     ExpiresAt of its last settled renewal, which may already be past.
//   - An expiry is audited as an allowed "expire" Decision timestamped with
//     the lease's ExpiresAt; an ending delivers the lease as it was when it
//     ended, with Keys set to the keys deleted (nil when none).
//   - GrantWithKey increments the revision once (the grant and its key are
//     one change); on a present key it audits a denied grant with LeaseID 0.
//   - Put always increments the revision, even when nothing visible changes;
//     Delete of an absent key changes nothing.
type refModel struct {
	cfg refConfig

	now    int64
	closed bool
	lastID lease.ID
	rev    int64

	leases  []*refLease // every lease ever granted, leases[i].id == i+1
	ended   []lease.ID  // remembered ended leases, oldest first
	keys    map[string]refKV
	handles []*refHandle // every keep-alive ever started, in call order

	decisions  []refDecision // everything the audit sink must have seen
	endings    []refEnding   // what an OnEnd subscriber must have seen
	expirings  []refSnap     // what the expiry subscriber must have seen
	subscribed bool
}

// refConfig is the service configuration a fuzz input chooses.
type refConfig struct {
	minTTL, maxTTL time.Duration
	endedCapacity  int
	auditCapacity  int
	onExpire       bool
	subscribe      bool
	timers         bool // the service's clock fires timers
}

type refState uint8

const (
	refActive refState = iota
	refExpired
	refRevoked
)

type refLease struct {
	id                                  lease.ID
	holder                              string
	purpose                             lease.Purpose
	ttl, granted, renewed, expires, rev int64
	state                               refState
	forgotten                           bool         // evicted from the ended record
	keepAliveNext                       int64        // next renewal while a keep-alive is live
	handles                             []*refHandle // its keep-alives, oldest first
}

type refKV struct {
	value string
	lease lease.ID
}

// refHandle is one KeepAlive call: its lease, the trace ID of its context,
// and whether (and why) the context it returned is done.
type refHandle struct {
	lease lease.ID
	trace string
	done  bool
	cause error
}

// refSnap is a lease.Lease with times as offsets, so diffs read well.
type refSnap struct {
	ID                              lease.ID
	Holder                          string
	Purpose                         lease.Purpose
	TTL                             time.Duration
	GrantedAt, RenewedAt, ExpiresAt int64
	Revision                        int64
	Keys                            []string
}

type refDecision struct {
	LeaseID  lease.ID
	Action   lease.Action
	Allowed  bool
	Code     lease.Code
	Holder   string
	TraceID  string
	At       int64
	Revision int64
}

// refEnding is one OnEnd notification, with the code Info gives for the
// lease when the subscriber calls back into the service.
type refEnding struct {
	Lease    refSnap
	Reason   lease.EndReason
	InfoCode lease.Code
}

// refErr is the error an operation must return. For LS_INVALID_ARGUMENT any
// of Fields may be named (the contract does not order the checks); LeaseID is
// checked for the codes that concern one lease.
type refErr struct {
	Code    lease.Code
	Fields  []string
	LeaseID lease.ID
}

var refEpoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newRefModel(cfg refConfig) *refModel {
	return &refModel{cfg: cfg, keys: map[string]refKV{}, subscribed: cfg.subscribe}
}

func refLeaseErr(code lease.Code, id lease.ID) *refErr { return &refErr{Code: code, LeaseID: id} }

func refInvalid(fields ...string) *refErr {
	return &refErr{Code: lease.CodeInvalidArgument, Fields: fields}
}

func (m *refModel) ttlOK(ttl time.Duration) bool {
	return ttl > 0 && ttl >= m.cfg.minTTL && ttl <= m.cfg.maxTTL
}

// get returns the lease with id if it was ever issued.
func (m *refModel) get(id lease.ID) *refLease {
	if id == 0 || id > m.lastID {
		return nil
	}
	return m.leases[id-1]
}

// liveHandles returns the keep-alives of l whose contexts are not done,
// oldest first.
func (m *refModel) liveHandles(l *refLease) []*refHandle {
	var out []*refHandle
	for _, h := range l.handles {
		if !h.done {
			out = append(out, h)
		}
	}
	return out
}

// due is the next instant the service must act on an active lease.
func (m *refModel) due(l *refLease) int64 {
	if len(m.liveHandles(l)) > 0 {
		return l.keepAliveNext
	}
	return l.expires
}

// nextDue returns the active lease with the earliest deadline, ties by ID.
func (m *refModel) nextDue() *refLease {
	var next *refLease
	for _, l := range m.leases {
		if l.state != refActive {
			continue
		}
		if next == nil || m.due(l) < m.due(next) {
			next = l
		}
	}
	return next
}

// settle handles everything due at or before now, in deadline order.
func (m *refModel) settle() {
	for {
		l := m.nextDue()
		if l == nil || m.due(l) > m.now {
			return
		}
		if hs := m.liveHandles(l); len(hs) > 0 {
			// Late by several intervals (no timer ran): one renewal, at
			// the last instant one was due.
			at := l.keepAliveNext
			if every := max(l.ttl/3, 1); m.now-at >= every {
				at += (m.now - at) / every * every
			}
			m.renewLease(l, at, l.ttl)
			m.decide(l.id, lease.ActionRenew, "", l.holder, hs[0].trace, at)
			continue
		}
		m.end(l, l.expires, lease.EndExpired, "")
	}
}

// renewalsWithin estimates how many keep-alive renewals the next d brings.
func (m *refModel) renewalsWithin(d time.Duration) int {
	n := 0
	for _, l := range m.leases {
		if l.state == refActive && len(m.liveHandles(l)) > 0 {
			n += int(int64(d)/max(l.ttl/3, 1)) + 1
		}
	}
	return n
}

// advance moves time forward by d. With timers, the service acts at each
// deadline as it passes; without, it catches up at the next call.
func (m *refModel) advance(d time.Duration) {
	target := m.now + int64(d)
	if m.cfg.timers && !m.closed {
		for {
			l := m.nextDue()
			if l == nil || m.due(l) > target {
				break
			}
			m.now = m.due(l)
			m.settle()
		}
	}
	m.now = target
}

func (m *refModel) begin() *refErr {
	if m.closed {
		return &refErr{Code: lease.CodeClosed}
	}
	m.settle()
	return nil
}

// lookup returns the active lease id, or the error the operation table gives
// with the lease if the service still remembers it (for the audit holder).
func (m *refModel) lookup(id lease.ID, use bool) (*refLease, *refErr) {
	l := m.get(id)
	var code lease.Code
	switch {
	case l == nil:
		return nil, refLeaseErr(lease.CodeNotFound, id)
	case l.state == refActive:
		return l, nil
	case l.forgotten:
		l, code = nil, lease.CodeExpired
	case l.state == refRevoked:
		code = lease.CodeAlreadyRevoked
	default:
		code = lease.CodeExpired
	}
	if use {
		code = lease.CodeStaleUse
	}
	return l, refLeaseErr(code, id)
}

func holderOf(l *refLease) string {
	if l == nil {
		return ""
	}
	return l.holder
}

func (m *refModel) decide(id lease.ID, action lease.Action, code lease.Code, holder, trace string, at int64) {
	m.decisions = append(m.decisions, refDecision{
		LeaseID: id, Action: action, Allowed: code == "", Code: code,
		Holder: holder, TraceID: trace, At: at, Revision: m.rev,
	})
}

func (m *refModel) keysOf(id lease.ID) []string {
	var keys []string
	for k, kv := range m.keys {
		if kv.lease == id {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func (m *refModel) snap(l *refLease) refSnap {
	return refSnap{
		ID: l.id, Holder: l.holder, Purpose: l.purpose, TTL: time.Duration(l.ttl),
		GrantedAt: l.granted, RenewedAt: l.renewed, ExpiresAt: l.expires,
		Revision: l.rev, Keys: m.keysOf(l.id),
	}
}

// renewLease renews l at the instant at (now, or when a keep-alive renewal
// was due) for ttl.
func (m *refModel) renewLease(l *refLease, at, ttl int64) {
	m.rev++
	l.ttl = ttl
	l.renewed = at
	l.expires = at + ttl
	if len(m.liveHandles(l)) > 0 {
		l.keepAliveNext = at + max(ttl/3, 1)
	}
}

// end ends an active lease: its keys go, its keep-alives are done, it is
// remembered (evicting the oldest remembered one), audited and announced.
func (m *refModel) end(l *refLease, at int64, reason lease.EndReason, trace string) refSnap {
	s := m.snap(l)
	for _, k := range s.Keys {
		delete(m.keys, k)
	}
	m.rev++
	action, cause := lease.ActionExpire, lease.ErrExpired
	l.state = refExpired
	if reason == lease.EndRevoked {
		action, cause = lease.ActionRevoke, lease.ErrAlreadyRevoked
		l.state = refRevoked
	}
	for _, h := range m.liveHandles(l) {
		h.done, h.cause = true, cause
	}
	m.ended = append(m.ended, l.id)
	if len(m.ended) > m.cfg.endedCapacity {
		m.get(m.ended[0]).forgotten = true
		m.ended = m.ended[1:]
	}
	m.decide(l.id, action, "", l.holder, trace, at)
	if reason == lease.EndExpired && m.cfg.onExpire {
		m.expirings = append(m.expirings, s)
	}
	if m.subscribed {
		// The subscriber runs when the call that ended the lease returns; by
		// then only a record of size 0 has forgotten a revocation.
		code := lease.CodeExpired
		if reason == lease.EndRevoked && m.cfg.endedCapacity > 0 {
			code = lease.CodeAlreadyRevoked
		}
		m.endings = append(m.endings, refEnding{Lease: s, Reason: reason, InfoCode: code})
	}
	return s
}

// grantArgs checks Grant's (and GrantWithKey's) arguments.
func (m *refModel) grantArgs(holder string, purpose lease.Purpose, ttl time.Duration, withKey bool, key string) *refErr {
	var bad []string
	if withKey && key == "" {
		bad = append(bad, "key")
	}
	if holder == "" {
		bad = append(bad, "holder")
	}
	if !purpose.Valid() {
		bad = append(bad, "purpose")
	}
	if !m.ttlOK(ttl) {
		bad = append(bad, "ttl")
	}
	if len(bad) > 0 {
		return refInvalid(bad...)
	}
	return nil
}

func (m *refModel) grant(holder string, purpose lease.Purpose, ttl time.Duration, withKey bool, key, value, trace string) (refSnap, *refErr) {
	if err := m.grantArgs(holder, purpose, ttl, withKey, key); err != nil {
		return refSnap{}, err
	}
	if err := m.begin(); err != nil {
		return refSnap{}, err
	}
	if kv, ok := m.keys[key]; withKey && ok {
		m.decide(0, lease.ActionGrant, lease.CodeKeyExists, "", trace, m.now)
		return refSnap{}, refLeaseErr(lease.CodeKeyExists, kv.lease)
	}
	m.lastID++
	m.rev++
	l := &refLease{
		id: m.lastID, holder: holder, purpose: purpose, ttl: int64(ttl),
		granted: m.now, renewed: m.now, expires: m.now + int64(ttl), rev: m.rev,
	}
	m.leases = append(m.leases, l)
	if withKey {
		m.keys[key] = refKV{value: value, lease: l.id}
	}
	m.decide(l.id, lease.ActionGrant, "", holder, trace, m.now)
	return m.snap(l), nil
}

// renew is Renew, or RenewTTL when withTTL is set.
func (m *refModel) renew(id lease.ID, withTTL bool, ttl time.Duration, trace string) (refSnap, *refErr) {
	if withTTL && !m.ttlOK(ttl) {
		return refSnap{}, refInvalid("ttl")
	}
	if err := m.begin(); err != nil {
		return refSnap{}, err
	}
	l, err := m.lookup(id, false)
	if err != nil {
		m.decide(id, lease.ActionRenew, err.Code, holderOf(l), trace, m.now)
		return refSnap{}, err
	}
	if !withTTL {
		ttl = time.Duration(l.ttl)
	}
	m.renewLease(l, m.now, int64(ttl))
	m.decide(id, lease.ActionRenew, "", l.holder, trace, m.now)
	return m.snap(l), nil
}

func (m *refModel) use(id lease.ID, purpose lease.Purpose, trace string) (refSnap, *refErr) {
	if !purpose.Valid() {
		return refSnap{}, refInvalid("purpose")
	}
	if err := m.begin(); err != nil {
		return refSnap{}, err
	}
	l, err := m.lookup(id, true)
	if err == nil && l.purpose != purpose {
		err = refLeaseErr(lease.CodePurposeMismatch, id)
	}
	if err != nil {
		m.decide(id, lease.ActionUse, err.Code, holderOf(l), trace, m.now)
		return refSnap{}, err
	}
	m.decide(id, lease.ActionUse, "", l.holder, trace, m.now)
	return m.snap(l), nil
}

func (m *refModel) revoke(id lease.ID, trace string) (refSnap, *refErr) {
	if err := m.begin(); err != nil {
		return refSnap{}, err
	}
	l, err := m.lookup(id, false)
	if err != nil {
		m.decide(id, lease.ActionRevoke, err.Code, holderOf(l), trace, m.now)
		return refSnap{}, err
	}
	return m.end(l, m.now, lease.EndRevoked, trace), nil
}

func (m *refModel) info(id lease.ID) (refSnap, *refErr) {
	if err := m.begin(); err != nil {
		return refSnap{}, err
	}
	l, err := m.lookup(id, false)
	if err != nil {
		return refSnap{}, err
	}
	return m.snap(l), nil
}

func (m *refModel) put(key, value string, id lease.ID) *refErr {
	if key == "" {
		return refInvalid("key")
	}
	if err := m.begin(); err != nil {
		return err
	}
	if id != 0 {
		if _, err := m.lookup(id, false); err != nil {
			return err
		}
	}
	m.keys[key] = refKV{value: value, lease: id}
	m.rev++
	return nil
}

func (m *refModel) del(key string) (bool, *refErr) {
	if key == "" {
		return false, refInvalid("key")
	}
	if err := m.begin(); err != nil {
		return false, err
	}
	if _, ok := m.keys[key]; !ok {
		return false, nil
	}
	delete(m.keys, key)
	m.rev++
	return true, nil
}

// keepAlive starts a keep-alive; it returns the new handle's index, or -1.
func (m *refModel) keepAlive(id lease.ID, trace string) (int, *refErr) {
	if err := m.begin(); err != nil {
		return -1, err
	}
	l, err := m.lookup(id, false)
	if err != nil {
		m.decide(id, lease.ActionRenew, err.Code, holderOf(l), trace, m.now)
		return -1, err
	}
	h := &refHandle{lease: id, trace: trace}
	m.handles = append(m.handles, h)
	l.handles = append(l.handles, h)
	m.renewLease(l, m.now, l.ttl)
	m.decide(id, lease.ActionRenew, "", l.holder, trace, m.now)
	return len(m.handles) - 1, nil
}

// stopKeepAlive is the parent context of handle i being cancelled.
func (m *refModel) stopKeepAlive(i int) {
	if h := m.handles[i]; !h.done {
		if !m.closed {
			m.settle() // renewals due before the cancel still happen
		}
		h.done, h.cause = true, context.Canceled
	}
}

func (m *refModel) close() {
	if m.closed {
		return
	}
	m.closed = true
	for _, h := range m.handles {
		if !h.done {
			h.done, h.cause = true, lease.ErrClosed
		}
	}
}

// The observations: each settles first, like every call of the service.

func (m *refModel) getKey(key string) (string, lease.ID, bool) {
	if m.closed {
		return "", 0, false
	}
	m.settle()
	kv, ok := m.keys[key]
	return kv.value, kv.lease, ok
}

func (m *refModel) scan(prefix string, limit int) []lease.KeyValue {
	if m.closed {
		return nil
	}
	m.settle()
	var out []lease.KeyValue
	for k, kv := range m.keys {
		if strings.HasPrefix(k, prefix) {
			out = append(out, lease.KeyValue{Key: k, Value: []byte(kv.value), LeaseID: kv.lease})
		}
	}
	slices.SortFunc(out, func(a, b lease.KeyValue) int { return strings.Compare(a.Key, b.Key) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

func (m *refModel) list() []refSnap {
	if m.closed {
		return nil
	}
	m.settle()
	var out []refSnap
	for _, l := range m.leases {
		if l.state == refActive {
			out = append(out, m.snap(l))
		}
	}
	return out
}

func (m *refModel) activeCount() int {
	if m.closed {
		return 0
	}
	return len(m.list())
}

func (m *refModel) revision() int64 {
	if !m.closed {
		m.settle()
	}
	return m.rev
}

// audit returns what Audit must return: the newest decisions that fit.
func (m *refModel) audit() []refDecision {
	if !m.closed {
		m.settle()
	}
	return m.decisions[max(0, len(m.decisions)-m.cfg.auditCapacity):]
}
