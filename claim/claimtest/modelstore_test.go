package claimtest_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// memStore is a plain reference claim.Store for the suite's own tests: a
// map of items behind one mutex, on any lease.Clock, written for
// obviousness. It checks time lazily on every call and with one timer for
// the next deadline, which ends lost claims and wakes Notify. It is safe
// for concurrent use.
type memStore struct {
	clock lease.Clock
	// broken names the rule of the contract this store breaks, for
	// showing that the suite catches it; "" for none.
	broken string

	mu        sync.Mutex
	closed    bool
	nextID    claim.ItemID
	nextToken uint64
	items     map[claim.ItemID]*memItem
	lost      map[claim.Ref]func(claim.Ref, error)
	wake      map[string]chan struct{}
	timer     lease.Timer
}

type memItem struct {
	claim.Item
	token   uint64 // the live claim's, while Claimed
	owner   string
	expires time.Time
}

func newMemStore(clock lease.Clock) *memStore {
	return &memStore{clock: clock, items: map[claim.ItemID]*memItem{},
		lost: map[claim.Ref]func(claim.Ref, error){}, wake: map[string]chan struct{}{}}
}

func invalid(op, field string) error {
	return &lease.Error{Code: lease.CodeInvalidArgument, Op: "memstore." + op, Field: field, Detail: "bad"}
}

func stale(op string, r claim.Ref) error {
	return &lease.Error{Code: lease.CodeStaleUse, Op: "memstore." + op, LeaseID: lease.ID(r.Token), Detail: "not the live claim"}
}

func notFound(op, queue string, id claim.ItemID) error {
	return &claim.NotFoundError{Op: op, Queue: queue, Item: id}
}

// begin locks the store, checks ctx, and brings it up to the clock's time.
// The caller unlocks with end.
func (s *memStore) begin(ctx context.Context, op string) error {
	if ctx == nil {
		return invalid(op, "ctx")
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return &lease.Error{Code: lease.CodeClosed, Op: "memstore." + op}
	}
	s.catchUp()
	return nil
}

// end arms the timer for the next deadline and unlocks.
func (s *memStore) end() {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	now := s.clock.Now()
	var next time.Time
	for _, it := range s.items {
		at := it.expires
		if it.State == claim.Delayed {
			at = it.VisibleAt
		}
		if !at.IsZero() && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	if !next.IsZero() && !s.closed {
		s.timer = s.clock.AfterFunc(next.Sub(now), s.tick)
	}
	s.mu.Unlock()
}

func (s *memStore) tick() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.catchUp()
	s.end()
}

// catchUp ends the claims that expired and makes due items visible, in
// expiry order.
func (s *memStore) catchUp() {
	now := s.clock.Now()
	var expired []*memItem
	for _, it := range s.items {
		switch {
		case it.State == claim.Claimed && !it.expires.After(now):
			expired = append(expired, it)
		case it.State == claim.Delayed && !it.VisibleAt.After(now):
			it.State = claim.Visible
			s.signal(it.Queue)
		}
	}
	slices.SortFunc(expired, func(a, b *memItem) int {
		return cmp.Or(a.expires.Compare(b.expires), cmp.Compare(a.ID, b.ID))
	})
	for _, it := range expired {
		ref := claim.Ref{Item: it.ID, Token: it.token}
		it.History = append(it.History, claim.Failure{Attempt: it.Attempts, Owner: it.owner, At: it.expires, Reason: "lease expired", Lost: true})
		if it.Attempts >= it.MaxAttempts && s.broken != "lostNotDead" {
			it.State, it.DeadAt = claim.Dead, it.expires
		} else {
			it.State, it.VisibleAt = claim.Visible, it.expires
		}
		it.token, it.owner, it.expires = 0, "", time.Time{}
		s.signal(it.Queue)
		if f := s.lost[ref]; f != nil {
			delete(s.lost, ref)
			f(ref, stale("claim", ref))
		}
	}
}

func (s *memStore) signal(queue string) {
	if ch := s.wake[queue]; ch != nil {
		close(ch)
		delete(s.wake, queue)
	}
}

func snapshot(it *memItem) claim.Item {
	x := it.Item
	x.Payload = bytes.Clone(it.Payload)
	x.History = slices.Clone(it.History)
	x.Tags, x.Metadata = slices.Clone(it.Tags), bytes.Clone(it.Metadata)
	return x
}

func checkItem(n claim.NewItem, lax bool) error {
	switch {
	case n.Queue == "":
		return invalid("enqueue", "queue")
	case n.Delay < 0:
		return invalid("enqueue", "delay")
	case n.MaxAttempts < 1 && !lax:
		return invalid("enqueue", "max_attempts")
	case n.Priority < 0 || n.Priority > claim.MaxPriority:
		return invalid("enqueue", "priority")
	case n.Timeout < 0 || n.Timeout > claim.MaxTimeout:
		return invalid("enqueue", "timeout")
	case len(n.Tags) > claim.MaxTags || slices.ContainsFunc(n.Tags, func(t string) bool { return t == "" || len(t) > claim.MaxTagLen }):
		return invalid("enqueue", "tags")
	case len(n.KeyStates) > 0 && n.Key == "",
		slices.ContainsFunc(n.KeyStates, func(st claim.State) bool { return st < claim.Visible || st > claim.Cancelled }):
		return invalid("enqueue", "key_states")
	}
	return nil
}

func (s *memStore) byKey(queue, key string) *memItem {
	if key == "" || s.broken == "keyless" {
		return nil
	}
	for _, it := range s.items {
		if it.Queue == queue && it.Key == key {
			return it
		}
	}
	return nil
}

func (s *memStore) Enqueue(ctx context.Context, items []claim.NewItem) ([]claim.Item, error) {
	for _, n := range items {
		if err := checkItem(n, s.broken == "lax"); err != nil {
			return nil, err
		}
	}
	if err := s.begin(ctx, "enqueue"); err != nil {
		return nil, err
	}
	defer s.end()
	now := s.clock.Now()
	out := make([]claim.Item, len(items))
	judged := map[[2]string]bool{}
	for i, n := range items {
		it := s.byKey(n.Queue, n.Key)
		again := judged[[2]string{n.Queue, n.Key}]
		judged[[2]string{n.Queue, n.Key}] = true
		if it != nil && len(n.KeyStates) > 0 && !again && !slices.Contains(n.KeyStates, it.State) && s.broken != "keyStatesIgnored" {
			it.Key = "" // its state does not block n: it gives the key up
			it = nil
		}
		dup := it != nil
		if it == nil {
			s.nextID++
			it = &memItem{Item: claim.Item{ID: s.nextID, Queue: n.Queue, Kind: n.Kind, Tags: slices.Clone(n.Tags), Metadata: bytes.Clone(n.Metadata), Key: n.Key, Payload: bytes.Clone(n.Payload),
				State: claim.Visible, MaxAttempts: n.MaxAttempts, Priority: n.Priority, Timeout: n.Timeout,
				EnqueuedAt: now, VisibleAt: now.Add(n.Delay)}}
			if n.Delay > 0 {
				it.State = claim.Delayed
			}
			s.items[it.ID] = it
			s.signal(n.Queue)
		}
		out[i] = snapshot(it)
		out[i].Duplicate = dup
	}
	return out, nil
}

// claimable returns the claimable items of queue in claim order.
func (s *memStore) claimable(queue string) []*memItem {
	var out []*memItem
	for _, it := range s.items {
		if it.Queue == queue && it.State == claim.Visible {
			out = append(out, it)
		}
	}
	slices.SortFunc(out, func(a, b *memItem) int {
		if s.broken == "wrongOrder" {
			return cmp.Compare(a.ID, b.ID)
		}
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), a.VisibleAt.Compare(b.VisibleAt), cmp.Compare(a.ID, b.ID))
	})
	return out
}

func (s *memStore) Claim(ctx context.Context, req claim.ClaimRequest) ([]claim.Claim, error) {
	switch {
	case req.Queue == "":
		return nil, invalid("claim", "queue")
	case req.Owner == "":
		return nil, invalid("claim", "owner")
	case req.Limit < 1:
		return nil, invalid("claim", "limit")
	case req.Lease <= 0:
		return nil, invalid("claim", "lease")
	}
	if err := s.begin(ctx, "claim"); err != nil {
		return nil, err
	}
	defer s.end()
	cands := s.claimable(req.Queue)
	cands = cands[:min(req.Limit, len(cands))]
	if s.broken == "racyClaim" {
		// Check, then act on what was seen: another Claim may take the
		// same items in the window.
		s.mu.Unlock()
		runtime.Gosched()
		s.mu.Lock()
	}
	out := make([]claim.Claim, 0, len(cands))
	for _, it := range cands {
		s.nextToken++
		it.Attempts++
		it.State, it.VisibleAt = claim.Claimed, time.Time{}
		it.token, it.owner, it.expires = s.nextToken, req.Owner, s.clock.Now().Add(req.Lease)
		ref := claim.Ref{Item: it.ID, Token: it.token}
		if req.Lost != nil {
			s.lost[ref] = req.Lost
		}
		out = append(out, claim.Claim{Queue: it.Queue, Kind: it.Kind, Tags: slices.Clone(it.Tags), Metadata: bytes.Clone(it.Metadata), Item: it.ID, Owner: req.Owner, Payload: bytes.Clone(it.Payload),
			Attempt: it.Attempts, MaxAttempts: it.MaxAttempts, Priority: it.Priority, Timeout: it.Timeout,
			ExpiresAt: it.expires, Ref: ref})
	}
	return out, nil
}

// live returns the item whose live claim r is.
func (s *memStore) live(op string, r claim.Ref) (*memItem, error) {
	it := s.items[r.Item]
	if it == nil || it.State != claim.Claimed || it.token != r.Token {
		return nil, stale(op, r)
	}
	return it, nil
}

func (s *memStore) Extend(ctx context.Context, r claim.Ref, d time.Duration) (time.Time, error) {
	switch {
	case r.Token == 0:
		return time.Time{}, invalid("extend", "ref")
	case d <= 0:
		return time.Time{}, invalid("extend", "lease")
	}
	if err := s.begin(ctx, "extend"); err != nil {
		return time.Time{}, err
	}
	defer s.end()
	it, err := s.live("extend", r)
	if err != nil {
		return time.Time{}, err
	}
	it.expires = s.clock.Now().Add(d)
	return it.expires, nil
}

func (s *memStore) Settle(ctx context.Context, st claim.Settlement) error {
	switch {
	case st.Ref.Token == 0:
		return invalid("settle", "ref")
	case st.How < claim.SettleComplete || st.How > claim.SettleSnooze:
		return invalid("settle", "how")
	case st.After < 0:
		return invalid("settle", "after")
	}
	if err := s.begin(ctx, "settle"); err != nil {
		return err
	}
	defer s.end()
	it, err := s.live("settle", st.Ref)
	if err != nil && s.broken == "staleComplete" && st.How == claim.SettleComplete {
		if x := s.items[st.Ref.Item]; x != nil && x.State == claim.Claimed {
			it, err = x, nil
		}
	}
	if err != nil {
		return err
	}
	delete(s.lost, st.Ref)
	now := s.clock.Now()
	failure := claim.Failure{Attempt: it.Attempts, Owner: it.owner, At: now, Reason: st.Reason}
	it.token, it.owner, it.expires = 0, "", time.Time{}
	switch st.How {
	case claim.SettleComplete:
		delete(s.items, it.ID)
	case claim.SettleDead:
		it.History = append(it.History, failure)
		it.State, it.DeadAt = claim.Dead, now
	case claim.SettleRetry, claim.SettleSnooze:
		if st.How == claim.SettleRetry {
			it.History = append(it.History, failure)
		} else if s.broken != "snoozeSpends" {
			it.Attempts--
		}
		it.State, it.VisibleAt = claim.Visible, now.Add(st.After)
		if st.After > 0 {
			it.State = claim.Delayed
		} else {
			s.signal(it.Queue)
		}
	}
	return nil
}

func (s *memStore) Cancel(ctx context.Context, queue string, id claim.ItemID) error {
	if queue == "" {
		return invalid("cancel", "queue")
	}
	if id == 0 {
		return invalid("cancel", "id")
	}
	if err := s.begin(ctx, "cancel"); err != nil {
		return err
	}
	defer s.end()
	it := s.items[id]
	if it == nil || it.Queue != queue {
		return notFound("cancel", queue, id)
	}
	delete(s.items, id)
	if it.State == claim.Claimed {
		ref := claim.Ref{Item: id, Token: it.token}
		if f := s.lost[ref]; f != nil {
			delete(s.lost, ref)
			f(ref, fmt.Errorf("%w: %w", claim.ErrCancelled, stale("cancel", ref)))
		}
	}
	return nil
}

func (s *memStore) Lookup(ctx context.Context, id claim.ItemID) (claim.Item, error) {
	if id == 0 {
		return claim.Item{}, invalid("lookup", "id")
	}
	if err := s.begin(ctx, "lookup"); err != nil {
		return claim.Item{}, err
	}
	defer s.end()
	it := s.items[id]
	if it == nil {
		return claim.Item{}, fmt.Errorf("memstore: lookup item %d: %w", id, claim.ErrNotFound)
	}
	if s.broken == "aliasing" {
		return it.Item, nil
	}
	return snapshot(it), nil
}

func (s *memStore) List(ctx context.Context, q claim.Query) ([]claim.Item, error) {
	switch {
	case q.Queue == "":
		return nil, invalid("list", "queue")
	case q.Limit < 1:
		return nil, invalid("list", "limit")
	case q.State > claim.Cancelled:
		return nil, invalid("list", "state")
	}
	if err := s.begin(ctx, "list"); err != nil {
		return nil, err
	}
	defer s.end()
	out := []claim.Item{}
	for _, id := range slices.Sorted(maps.Keys(s.items)) {
		it := s.items[id]
		if it.Queue == q.Queue && id > q.After && (q.State == 0 || it.State == q.State) && (q.Kind == "" || it.Kind == q.Kind) &&
			(q.Tag == "" || slices.Contains(it.Tags, q.Tag)) && len(out) < q.Limit {
			out = append(out, snapshot(it))
		}
	}
	return out, nil
}

func (s *memStore) Counts(ctx context.Context, queue string) (claim.Counts, error) {
	if queue == "" {
		return claim.Counts{}, invalid("counts", "queue")
	}
	if err := s.begin(ctx, "counts"); err != nil {
		return claim.Counts{}, err
	}
	defer s.end()
	var c claim.Counts
	for _, it := range s.items {
		if it.Queue != queue {
			continue
		}
		switch it.State {
		case claim.Visible:
			c.Visible++
		case claim.Delayed:
			c.Delayed++
		case claim.Claimed:
			c.Claimed++
		case claim.Dead:
			c.Dead++
		}
	}
	return c, nil
}

// dead returns the dead item id of queue.
func (s *memStore) dead(op, queue string, id claim.ItemID) (*memItem, error) {
	it := s.items[id]
	if it == nil || it.Queue != queue || it.State != claim.Dead {
		return nil, notFound(op, queue, id)
	}
	return it, nil
}

func (s *memStore) RequeueDead(ctx context.Context, queue string, id claim.ItemID) (claim.Item, error) {
	if queue == "" {
		return claim.Item{}, invalid("requeue_dead", "queue")
	}
	if id == 0 {
		return claim.Item{}, invalid("requeue_dead", "id")
	}
	if err := s.begin(ctx, "requeue_dead"); err != nil {
		return claim.Item{}, err
	}
	defer s.end()
	it, err := s.dead("requeue_dead", queue, id)
	if err != nil {
		return claim.Item{}, err
	}
	it.State, it.Attempts, it.VisibleAt, it.DeadAt = claim.Visible, 0, s.clock.Now(), time.Time{}
	s.signal(queue)
	return snapshot(it), nil
}

func (s *memStore) DeleteDead(ctx context.Context, queue string, id claim.ItemID) error {
	if queue == "" {
		return invalid("delete_dead", "queue")
	}
	if id == 0 {
		return invalid("delete_dead", "id")
	}
	if err := s.begin(ctx, "delete_dead"); err != nil {
		return err
	}
	defer s.end()
	if _, err := s.dead("delete_dead", queue, id); err != nil {
		return err
	}
	delete(s.items, id)
	return nil
}

func (s *memStore) RetryNow(ctx context.Context, queue string, id claim.ItemID) (claim.Item, error) {
	if queue == "" {
		return claim.Item{}, invalid("retry_now", "queue")
	}
	if id == 0 {
		return claim.Item{}, invalid("retry_now", "id")
	}
	if err := s.begin(ctx, "retry_now"); err != nil {
		return claim.Item{}, err
	}
	defer s.end()
	it := s.items[id]
	if it == nil || it.Queue != queue || (it.State != claim.Delayed && it.State != claim.Visible) {
		return claim.Item{}, notFound("retry_now", queue, id)
	}
	if it.State == claim.Delayed {
		it.State, it.VisibleAt = claim.Visible, s.clock.Now()
		s.signal(queue)
	}
	return snapshot(it), nil
}

func (s *memStore) Notify(queue string) (<-chan struct{}, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		ch := make(chan struct{})
		close(ch)
		return ch, func() {}
	}
	ch := s.wake[queue]
	if ch == nil {
		ch = make(chan struct{})
		s.wake[queue] = ch
	}
	return ch, func() {}
}

func (s *memStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
	}
	for q := range s.wake {
		s.signal(q)
	}
	return nil
}

var _ claim.Store = (*memStore)(nil)
