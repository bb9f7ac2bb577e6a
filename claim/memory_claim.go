package claim

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/leasehold/lease"
)

// Enqueue stores items, each visible at once or after its Delay, and
// returns them in order; see Store.
func (m *Memory) Enqueue(ctx context.Context, items []NewItem) ([]Item, error) {
	if err := checkContext(ctx, "enqueue"); err != nil {
		return nil, err
	}
	for i := range items {
		if err := checkNewItem(items, i); err != nil {
			return nil, err
		}
	}
	out := make([]Item, len(items))
	m.mu.Lock()
	defer m.unlock()
	now, err := m.begin("enqueue")
	if err != nil {
		return nil, err
	}
	var seen map[queueKey]struct{} // keys judged by an earlier item of the call
	for i := range items {
		n := &items[i]
		again := false
		if n.Key != "" && len(items) > 1 {
			if seen == nil {
				seen = make(map[queueKey]struct{})
			}
			k := queueKey{n.Queue, n.Key}
			_, again = seen[k]
			seen[k] = struct{}{}
		}
		it, dup := m.add(n, now, again)
		out[i] = m.snapshot(it)
		out[i].Duplicate = dup
	}
	return out, nil
}

// enqueueOne is Enqueue of one valid item, for the Broker.
func (m *Memory) enqueueOne(ctx context.Context, n *NewItem) (Item, error) {
	if err := checkItem("", n); err != nil {
		return Item{}, err
	}
	payload := clone(n.Payload)
	m.mu.Lock()
	defer m.unlock()
	now, err := m.begin("enqueue")
	if err != nil {
		return Item{}, err
	}
	it, dup := m.addCloned(n, payload, now, false)
	x := m.snapshot(it)
	x.Duplicate = dup
	return x, nil
}

// add stores one valid item, or finds the item with its key and reports
// it a duplicate. again says an earlier item of the same call had the key,
// which then blocks whatever n.KeyStates say.
func (m *Memory) add(n *NewItem, now int64, again bool) (*item, bool) {
	return m.addCloned(n, clone(n.Payload), now, again)
}

// addCloned is add with the payload already copied, outside the lock.
func (m *Memory) addCloned(n *NewItem, payload []byte, now int64, again bool) (*item, bool) {
	if n.Key != "" {
		k := queueKey{n.Queue, n.Key}
		if it := m.keys.get(k); it != nil {
			if len(n.KeyStates) == 0 || again || slices.Contains(n.KeyStates, it.state) {
				return it, true
			}
			// Its state does not block n: it gives its key up.
			m.keys.delete(k)
			it.key = ""
		}
	}
	qs := m.queue(n.Queue)
	m.lastID++
	it := &item{
		id:       m.lastID,
		qs:       qs,
		kind:     n.Kind,
		tags:     slices.Clone(n.Tags),
		metadata: clone(n.Metadata),
		key:      n.Key,
		payload:  payload,
		max:      n.MaxAttempts,
		priority: uint8(n.Priority),
		timeout:  n.Timeout,
		enqueued: now,
		index:    -1,
	}
	m.items.Put(uint64(it.id), it)
	if n.Key != "" {
		m.keys.put(queueKey{n.Queue, n.Key}, it)
	}
	m.place(it, addSat(now, n.Delay), now)
	m.sweep(it.id) // once the item is in its queue, which is then in use
	return it, false
}

// Claim claims up to req.Limit visible items of req.Queue; see Store. Each
// claim is a lease granted to req.Owner with purpose lease.Operation and
// TTL req.Lease, so the service's TTL bounds apply. On any error nothing is
// claimed, and so it is if the Memory is closed while the leases are being
// granted.
func (m *Memory) Claim(ctx context.Context, req ClaimRequest) ([]Claim, error) {
	if err := checkClaimRequest(ctx, req); err != nil {
		return nil, err
	}
	m.mu.Lock()
	if err := m.open("claim"); err != nil {
		m.mu.Unlock()
		return nil, err
	}
	if m.svcDown {
		m.mu.Unlock()
		return nil, &lease.Error{Package: "claim", Code: lease.CodeClosed, Op: "claim", Detail: "service closed"}
	}
	qs := m.findQueue(req.Queue)
	if qs == nil || qs.visible == 0 || qs.paused {
		m.unlock()
		return []Claim{}, nil
	}
	// Reserve the items, then grant their leases without the lock. The
	// leases go straight into out, which nobody else sees yet.
	n := min(req.Limit, qs.visible)
	var buf [8]*hold
	holds := buf[:0]
	if n > len(buf) {
		holds = make([]*hold, 0, n)
	}
	// The attempt counts from here, and the claims are filled in now: to
	// anyone looking meanwhile the item is claimed, and a Cancel before the
	// lease is granted leaves nothing to fill them from.
	out := make([]Claim, n)
	for i := range n {
		it := qs.pop()
		h := &hold{item: it, owner: req.Owner, lost: req.Lost}
		it.state = Claimed
		it.hold = h
		it.attempts++
		h.attempt = it.attempts
		qs.claimed++
		holds = append(holds, h)
		out[i] = Claim{Queue: req.Queue, Kind: it.kind, Tags: slices.Clone(it.tags), Metadata: clone(it.metadata), Item: it.id, Owner: req.Owner, Payload: clone(it.payload),
			Attempt: h.attempt, MaxAttempts: it.max, Priority: int(it.priority), Timeout: it.timeout,
			EnqueuedAt: m.at(it.enqueued), Ref: Ref{Item: it.id}}
	}
	missed := m.missed
	m.mu.Unlock()

	var err error
	granted := 0
	for ; granted < len(out); granted++ {
		l, gerr := m.svc.Grant(ctx, req.Owner, lease.Operation, req.Lease)
		if gerr != nil {
			err = gerr
			break
		}
		out[granted].ExpiresAt = l.ExpiresAt
		out[granted].Ref.Token = uint64(l.ID)
	}

	m.mu.Lock()
	if err == nil && m.closed {
		err = closedError("claim")
	}
	if err != nil {
		// Put the items back where they were, as if never claimed, and
		// give back the leases already granted.
		for _, h := range holds {
			if h.item.hold != h {
				continue // cancelled meanwhile
			}
			h.item.attempts--
			m.release(h)
			m.makeVisible(h.item, h.item.visibleAt)
		}
		m.unlock()
		for _, c := range out[:granted] {
			_, _ = m.svc.Revoke(context.WithoutCancel(ctx), lease.ID(c.Ref.Token))
		}
		return nil, err
	}
	var revoke []lease.ID
	for i, h := range holds {
		it := h.item
		h.lease = lease.ID(out[i].Ref.Token)
		if it.hold != h {
			// Cancelled while its lease was being granted: the claim was
			// made and then cancelled, as Cancel came after the item was
			// taken. It is returned, stale already; its Lost hears why, and
			// its lease is given back.
			if h.lost != nil {
				h.lost(out[i].Ref, cancelled(out[i].Ref))
			}
			revoke = append(revoke, h.lease)
			continue
		}
		h.expires = m.nanos(out[i].ExpiresAt)
		m.byLease.put(h.lease, h)
		m.claims.push(h.expires, it)
	}
	if m.missed != missed {
		// A lease ended that the Memory did not know, perhaps one of these
		// before it was recorded: if it expired, take it back now.
		m.settle(m.now())
	}
	m.unlock()
	for _, id := range revoke {
		_, _ = m.svc.Revoke(context.WithoutCancel(ctx), id)
	}
	return out, nil
}

// Extend extends the live claim r to lease from now on the service's
// clock, and returns its new expiry; see Store.
func (m *Memory) Extend(ctx context.Context, r Ref, d time.Duration) (time.Time, error) {
	const op = "extend"
	if err := checkExtend(ctx, op, r, d); err != nil {
		return time.Time{}, err
	}
	h, beatsDone, err := m.acquire(op, r, false)
	if err != nil {
		return time.Time{}, err
	}
	l, err := m.svc.RenewTTL(ctx, lease.ID(r.Token), d)

	m.mu.Lock()
	defer m.unlock()
	if m.closed {
		return time.Time{}, closedError(op)
	}
	if err == nil {
		expires := m.nanos(l.ExpiresAt)
		if h.beats > 1 || h.beatsDone != beatsDone {
			// Another extend overlapped this one and the service may have
			// applied it last: keep the later expiry. Should the service's
			// be the earlier, its ending notification takes the item back;
			// the Memory never expires a claim early.
			expires = max(expires, h.expires)
		}
		h.expires = expires
	}
	h.beats--
	h.beatsDone++
	if h.item.hold != h {
		h.busy--
		return time.Time{}, stale(op, r, "was cancelled")
	}
	m.finish(h, err)
	if err != nil {
		return time.Time{}, m.coreError(op, r, err)
	}
	return l.ExpiresAt, nil
}

// Settle ends the live claim s.Ref as s.How says; see Store. It revokes the
// claim's lease and, if the service agrees the lease was live, decides the
// item's fate.
func (m *Memory) Settle(ctx context.Context, s Settlement) error {
	const op = "settle"
	if err := checkSettlement(ctx, s); err != nil {
		return err
	}
	h, _, err := m.acquire(op, s.Ref, true)
	if err != nil {
		return err
	}
	_, err = m.svc.Revoke(ctx, lease.ID(s.Ref.Token))

	m.mu.Lock()
	defer m.unlock()
	h.settling = false
	if m.closed {
		return closedError(op)
	}
	if h.item.hold != h {
		h.busy--
		return stale(op, s.Ref, "was cancelled")
	}
	if err != nil {
		m.finish(h, err)
		return m.coreError(op, s.Ref, err)
	}
	h.busy--
	it := h.item
	m.release(h)
	if s.How == SettleComplete {
		if m.retention.Completed <= 0 {
			m.remove(it) // reads no clock: the commonest settlement stays cheap
			return nil
		}
		m.retire(it, Completed, m.now())
		return nil
	}
	now := m.now()
	switch s.How {
	case SettleRetry:
		it.history = append(it.history, Failure{Attempt: h.attempt, Owner: h.owner, At: m.at(now), Reason: s.Reason})
		m.place(it, addSat(now, s.After), now)
	case SettleDead:
		it.history = append(it.history, Failure{Attempt: h.attempt, Owner: h.owner, At: m.at(now), Reason: s.Reason})
		m.makeDead(it, now)
	case SettleSnooze:
		it.attempts-- // not spent
		m.place(it, addSat(now, s.After), now)
	}
	return nil
}

// Cancel removes the item id of queue whatever its state; see Store. A
// claimed item's claim ends at once: its Lost function is called with a
// cause matching ErrCancelled, and its lease is revoked.
func (m *Memory) Cancel(ctx context.Context, queue string, id ItemID) error {
	const op = "cancel"
	if err := checkItemID(ctx, op, queue, id); err != nil {
		return err
	}
	m.mu.Lock()
	now, err := m.begin(op)
	if err != nil {
		m.unlock()
		return err
	}
	it := m.lookup(id)
	if it == nil || it.qs.name != queue {
		m.unlock()
		return &NotFoundError{Op: op, Queue: queue, Item: id}
	}
	var revoke lease.ID
	switch it.state {
	case Completed, Cancelled:
		m.unlock()
		return nil // finished already: kept as it is
	case Visible:
		it.qs.drop(it)
	case Delayed:
		m.delayed.remove(it)
		it.qs.delayed--
	case Claimed:
		h := it.hold
		if h.lease != 0 && h.busy == 0 {
			m.claims.remove(it)
		}
		revoke = h.lease
		if h.lost != nil && h.lease != 0 {
			h.lost(h.ref(), cancelled(h.ref()))
		}
		m.release(h)
	}
	m.retire(it, Cancelled, now)
	m.unlock()
	if revoke != 0 {
		_, _ = m.svc.Revoke(context.WithoutCancel(ctx), revoke)
	}
	return nil
}

// acquire finds the live claim r refers to and marks a call under way on
// it: an extend, or with settle a Settle, which owns the claim from then
// on. The claim leaves the claims heap until finish, so that only the
// service's answer decides its fate meanwhile. For an extend it also
// returns how many extends of the claim had finished, to tell whether
// another one overlaps it.
//
// acquire does not read the clock: whether the lease is still live is for
// the service to answer, and a claim that expired is taken back when that
// answer comes.
func (m *Memory) acquire(op string, r Ref, settle bool) (*hold, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, 0, closedError(op)
	}
	it := m.lookup(r.Item)
	if it == nil || it.hold == nil || it.hold.lease != lease.ID(r.Token) {
		return nil, 0, stale(op, r, "is no longer claimed by this claim")
	}
	h := it.hold
	switch {
	case h.settling:
		return nil, 0, stale(op, r, "is being settled")
	case h.ended != 0:
		return nil, 0, stale(op, r, "lost its claim: lease "+h.ended.String())
	}
	if h.busy == 0 {
		m.claims.remove(it)
	}
	h.busy++
	h.settling = settle
	if !settle {
		h.beats++
	}
	return h, h.beatsDone, nil
}

// finish ends a call on claim h that did not settle it. err is the
// service's answer: if it says the lease is gone, the claim is lost. The
// last call to finish puts a still-live claim back in the claims heap or
// takes back its item if its lease ended meanwhile.
func (m *Memory) finish(h *hold, err error) {
	h.busy--
	if err != nil && leaseEnded(err) && h.ended == 0 {
		// The ending notification has not arrived yet.
		h.ended, h.endedAt = lease.EndExpired, h.expires
		if errors.Is(err, lease.ErrAlreadyRevoked) {
			h.ended = lease.EndRevoked
		}
	}
	if h.busy > 0 || h.item.hold != h {
		return
	}
	if h.ended != 0 {
		// An expiry ended the lease at its instant, no later than now; a
		// revocation is dated now, when the Memory learns of it.
		now := m.now()
		at := min(h.endedAt, now)
		if h.ended == lease.EndRevoked {
			at = now
		}
		m.lose(h, at, h.ended)
		return
	}
	m.claims.push(h.expires, h.item)
}

// coreError turns the service's error for a claim's lease into the
// Memory's: an ended lease is a stale claim; anything else (a cancelled
// context, a closed service, a TTL out of bounds) is returned as is.
func (m *Memory) coreError(op string, r Ref, err error) error {
	if leaseEnded(err) {
		return stale(op, r, "lost its claim: "+err.Error())
	}
	return err
}
