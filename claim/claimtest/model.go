package claimtest

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// model is the reference: the Store contract as a plain sequential value on
// its own clock, written for obviousness rather than speed. It takes the IDs
// and fencing tokens the store under test issued and checks that they are
// fresh, so the two stay comparable item by item. The zero model is not
// ready: use newModel.
type model struct {
	now    time.Time
	items  map[claim.ItemID]*mitem
	issued map[claim.ItemID]bool // every ID ever issued
	// lost lists the claims that ended other than by their own Settle,
	// since the last call to takeLost.
	lost []lostClaim
}

// mitem is the model's record of one item.
type mitem struct {
	id        claim.ItemID
	queue     string
	key       string
	payload   []byte
	state     claim.State // Visible (waiting, whatever its time), Claimed or Dead
	attempts  int
	max       int
	priority  int
	timeout   time.Duration
	enqueued  time.Time
	visibleAt time.Time
	deadAt    time.Time
	history   []claim.Failure
	tokens    []uint64 // every claim's token, the live one last
	owner     string   // the live claim's
	expires   time.Time
}

// lostClaim is a claim that ended without its Settle.
type lostClaim struct {
	ref       claim.Ref
	cancelled bool
}

func newModel(now time.Time) *model {
	return &model{now: now, items: map[claim.ItemID]*mitem{}, issued: map[claim.ItemID]bool{}}
}

// clone returns a deep copy, for the linearizability checker's steps.
func (m *model) clone() *model {
	c := &model{now: m.now, items: make(map[claim.ItemID]*mitem, len(m.items)), issued: maps.Clone(m.issued)}
	for id, it := range m.items {
		x := *it
		x.history = slices.Clone(it.history)
		x.tokens = slices.Clone(it.tokens)
		c.items[id] = &x
	}
	return c
}

// key is a canonical text of the state, for comparing states.
func (m *model) key() string {
	var b bytes.Buffer
	for _, id := range slices.Sorted(maps.Keys(m.items)) {
		it := m.items[id]
		fmt.Fprintf(&b, "%d %s %q %v a%d t%v h%d p%d|", id, it.queue, it.key, it.state, it.attempts, it.tokens, len(it.history), it.priority)
	}
	fmt.Fprintf(&b, "issued %v", slices.Sorted(maps.Keys(m.issued)))
	return b.String()
}

// errClass is the kind of error a call returned, as the contract sorts them.
type errClass uint8

const (
	errNone errClass = iota
	errInvalid
	errStale
	errNotFound
	errClosed
	errOther
)

func (c errClass) String() string {
	return [...]string{"no error", "ErrInvalidArgument", "ErrStaleUse", "ErrNotFound", "ErrClosed", "another error"}[c]
}

func classify(err error) errClass {
	switch {
	case err == nil:
		return errNone
	case errors.Is(err, lease.ErrInvalidArgument):
		return errInvalid
	case errors.Is(err, lease.ErrStaleUse):
		return errStale
	case errors.Is(err, claim.ErrNotFound):
		return errNotFound
	case errors.Is(err, lease.ErrClosed):
		return errClosed
	}
	return errOther
}

// advance moves the model's clock to t (never back), ending the claims
// whose lease expired by then, in expiry order.
func (m *model) advance(t time.Time) {
	if t.Before(m.now) {
		return
	}
	m.now = t
	var expired []*mitem
	for _, it := range m.items {
		if it.state == claim.Claimed && !it.expires.After(t) {
			expired = append(expired, it)
		}
	}
	slices.SortFunc(expired, func(a, b *mitem) int {
		return cmp.Or(a.expires.Compare(b.expires), cmp.Compare(a.id, b.id))
	})
	for _, it := range expired {
		at := it.expires
		it.history = append(it.history, claim.Failure{Attempt: it.attempts, Owner: it.owner, At: at, Lost: true})
		m.lost = append(m.lost, lostClaim{ref: it.ref()})
		if it.attempts >= it.max {
			it.state, it.deadAt = claim.Dead, at
		} else {
			it.state, it.visibleAt = claim.Visible, at
		}
		it.owner, it.expires = "", time.Time{}
	}
}

// takeLost returns and forgets the claims lost so far.
func (m *model) takeLost() []lostClaim {
	l := m.lost
	m.lost = nil
	return l
}

func (it *mitem) ref() claim.Ref {
	if it.state != claim.Claimed {
		return claim.Ref{}
	}
	return claim.Ref{Item: it.id, Token: it.tokens[len(it.tokens)-1]}
}

// snapshot is the item as the store must report it at the model's time.
func (m *model) snapshot(it *mitem) claim.Item {
	x := claim.Item{
		ID: it.id, Queue: it.queue, Key: it.key, Payload: bytes.Clone(it.payload), State: it.state,
		Attempts: it.attempts, MaxAttempts: it.max, Priority: it.priority, Timeout: it.timeout,
		EnqueuedAt: it.enqueued, History: slices.Clone(it.history),
	}
	switch it.state {
	case claim.Visible:
		x.VisibleAt = it.visibleAt
		if it.visibleAt.After(m.now) {
			x.State = claim.Delayed
		}
	case claim.Dead:
		x.DeadAt = it.deadAt
	}
	return x
}

// claimable returns the claimable items of queue in claim order.
func (m *model) claimable(queue string) []*mitem {
	var out []*mitem
	for _, it := range m.items {
		if it.queue == queue && it.state == claim.Visible && !it.visibleAt.After(m.now) {
			out = append(out, it)
		}
	}
	slices.SortFunc(out, func(a, b *mitem) int {
		return cmp.Or(cmp.Compare(a.priority, b.priority), a.visibleAt.Compare(b.visibleAt), cmp.Compare(a.id, b.id))
	})
	return out
}

func (m *model) byKey(queue, key string) *mitem {
	if key == "" {
		return nil
	}
	for _, it := range m.items {
		if it.queue == queue && it.key == key {
			return it
		}
	}
	return nil
}

// badItem reports whether n is bad input.
func badItem(n claim.NewItem) bool {
	return n.Queue == "" || n.Delay < 0 || n.MaxAttempts < 1 || n.Priority < 0 ||
		n.Priority > claim.MaxPriority || n.Timeout < 0 || n.Timeout > claim.MaxTimeout
}

// enqueue applies Enqueue(items), given the IDs the store returned, and
// returns the items the store must have returned. A returned ID that the
// contract rules out is reported in bad.
func (m *model) enqueue(items []claim.NewItem, ids []claim.ItemID) (want []claim.Item, class errClass, bad string) {
	if slices.ContainsFunc(items, badItem) {
		return nil, errInvalid, ""
	}
	if len(ids) != len(items) {
		return nil, errNone, fmt.Sprintf("Enqueue of %d items returned %d", len(items), len(ids))
	}
	// A key is judged once a call, by the first item with it: later items
	// with the key get what that one found or added.
	judged := map[[2]string]bool{}
	for i, n := range items {
		k := [2]string{n.Queue, n.Key}
		it := m.byKey(n.Queue, n.Key)
		if it != nil && !judged[k] && len(n.KeyStates) > 0 && !slices.Contains(n.KeyStates, m.snapshot(it).State) {
			it.key = "" // in a state that does not block: it gives up its key
			it = nil
		}
		if n.Key != "" {
			judged[k] = true
		}
		if it != nil {
			if ids[i] != it.id {
				return nil, errNone, fmt.Sprintf("Enqueue item %d: key %q exists as item %d, store returned item %d", i, n.Key, it.id, ids[i])
			}
			want = append(want, m.snapshot(it))
			continue
		}
		if ids[i] == 0 || m.issued[ids[i]] {
			return nil, errNone, fmt.Sprintf("Enqueue item %d: ID %d is zero or was issued before", i, ids[i])
		}
		m.issued[ids[i]] = true
		it = &mitem{
			id: ids[i], queue: n.Queue, key: n.Key, payload: bytes.Clone(n.Payload), state: claim.Visible,
			max: n.MaxAttempts, priority: n.Priority, timeout: n.Timeout, enqueued: m.now, visibleAt: m.now.Add(n.Delay),
		}
		m.items[it.id] = it
		want = append(want, m.snapshot(it))
	}
	return want, errNone, ""
}

func badClaim(r claim.ClaimRequest) bool {
	return r.Queue == "" || r.Owner == "" || r.Limit < 1 || r.Lease <= 0
}

// claimOrder says how strictly claim checks which items the store took.
// exactOrder: exactly the first min(Limit, claimable) in claim order.
// anySubset: any claimable items, up to Limit, possibly none. The second is
// for stores on a real clock, such as PostgreSQL's: the model cannot know
// their VisibleAt, a claim there picks from a snapshot that a concurrent
// Enqueue outdates, and one that skips rows locked by other transactions
// (FOR UPDATE SKIP LOCKED) can miss an item that a concurrent Counts still
// shows visible. ClaimOrder and ClaimLimit check order and count one call
// at a time.
type claimOrder uint8

const (
	exactOrder claimOrder = iota
	anySubset
)

// claim applies Claim(req) given what the store returned, and returns the
// claims the store must have returned, in the store's order. Claims the
// contract rules out are reported in bad.
func (m *model) claim(req claim.ClaimRequest, got []claim.Claim, order claimOrder) (want []claim.Claim, class errClass, bad string) {
	if badClaim(req) {
		return nil, errInvalid, ""
	}
	cands := m.claimable(req.Queue)
	n := min(req.Limit, len(cands))
	if len(got) != n && (order == exactOrder || len(got) > n) {
		return nil, errNone, fmt.Sprintf("Claim(limit %d) returned %d claims; %d items are claimable", req.Limit, len(got), len(cands))
	}
	allowed := map[claim.ItemID]bool{}
	switch order {
	case exactOrder:
		for _, it := range cands[:n] {
			allowed[it.id] = true
		}
	case anySubset:
		for _, it := range cands {
			allowed[it.id] = true
		}
	}
	for _, c := range got {
		it := m.items[c.Ref.Item]
		if !allowed[c.Ref.Item] || it == nil {
			return nil, errNone, fmt.Sprintf("Claim took item %d out of claim order (should take %v)", c.Ref.Item, ids(cands[:n]))
		}
		delete(allowed, c.Ref.Item)
		if c.Ref.Token == 0 || slices.Contains(it.tokens, c.Ref.Token) {
			return nil, errNone, fmt.Sprintf("Claim of item %d: token %d is zero or an earlier claim's", it.id, c.Ref.Token)
		}
		it.attempts++
		it.state, it.visibleAt = claim.Claimed, time.Time{}
		it.tokens = append(it.tokens, c.Ref.Token)
		it.owner, it.expires = req.Owner, m.now.Add(req.Lease)
		want = append(want, claim.Claim{
			Queue: it.queue, Item: it.id, Owner: req.Owner, Payload: bytes.Clone(it.payload),
			Attempt: it.attempts, MaxAttempts: it.max, Priority: it.priority, Timeout: it.timeout,
			ExpiresAt: it.expires, Ref: c.Ref,
		})
	}
	return want, errNone, ""
}

func ids(items []*mitem) []claim.ItemID {
	out := make([]claim.ItemID, len(items))
	for i, it := range items {
		out[i] = it.id
	}
	return out
}

// live returns the item whose live claim r is, or nil.
func (m *model) live(r claim.Ref) *mitem {
	it := m.items[r.Item]
	if it == nil || it.state != claim.Claimed || it.ref() != r {
		return nil
	}
	return it
}

// extend applies Extend and returns the new expiry.
func (m *model) extend(r claim.Ref, d time.Duration) (time.Time, errClass) {
	if r.Token == 0 || d <= 0 {
		return time.Time{}, errInvalid
	}
	it := m.live(r)
	if it == nil {
		return time.Time{}, errStale
	}
	it.expires = m.now.Add(d)
	return it.expires, errNone
}

func badSettlement(s claim.Settlement) bool {
	return s.Ref.Token == 0 || s.How < claim.SettleComplete || s.How > claim.SettleSnooze || s.After < 0
}

// settle applies Settle.
func (m *model) settle(s claim.Settlement) errClass {
	if badSettlement(s) {
		return errInvalid
	}
	it := m.live(s.Ref)
	if it == nil {
		return errStale
	}
	owner := it.owner
	it.owner, it.expires = "", time.Time{}
	switch s.How {
	case claim.SettleComplete:
		delete(m.items, it.id)
	case claim.SettleRetry:
		it.history = append(it.history, claim.Failure{Attempt: it.attempts, Owner: owner, At: m.now, Reason: s.Reason})
		it.state, it.visibleAt = claim.Visible, m.now.Add(s.After)
	case claim.SettleDead:
		it.history = append(it.history, claim.Failure{Attempt: it.attempts, Owner: owner, At: m.now, Reason: s.Reason})
		it.state, it.deadAt = claim.Dead, m.now
	case claim.SettleSnooze:
		it.attempts--
		it.state, it.visibleAt = claim.Visible, m.now.Add(s.After)
	}
	return errNone
}

// cancel applies Cancel.
func (m *model) cancel(queue string, id claim.ItemID) errClass {
	if queue == "" {
		return errInvalid
	}
	it := m.items[id]
	if it == nil || it.queue != queue {
		return errNotFound
	}
	if it.state == claim.Claimed {
		m.lost = append(m.lost, lostClaim{ref: it.ref(), cancelled: true})
	}
	delete(m.items, id)
	return errNone
}

// lookup applies Lookup.
func (m *model) lookup(id claim.ItemID) (claim.Item, errClass) {
	it := m.items[id]
	if it == nil {
		return claim.Item{}, errNotFound
	}
	return m.snapshot(it), errNone
}

func badQuery(q claim.Query) bool {
	return q.Queue == "" || q.Limit < 1 || q.State > claim.Cancelled
}

// list applies List.
func (m *model) list(q claim.Query) ([]claim.Item, errClass) {
	if badQuery(q) {
		return nil, errInvalid
	}
	out := []claim.Item{}
	for _, id := range slices.Sorted(maps.Keys(m.items)) {
		it := m.items[id]
		x := m.snapshot(it)
		if it.queue == q.Queue && id > q.After && (q.State == 0 || x.State == q.State) && len(out) < q.Limit {
			out = append(out, x)
		}
	}
	return out, errNone
}

// counts applies Counts.
func (m *model) counts(queue string) (claim.Counts, errClass) {
	if queue == "" {
		return claim.Counts{}, errInvalid
	}
	var c claim.Counts
	for _, it := range m.items {
		if it.queue != queue {
			continue
		}
		switch m.snapshot(it).State {
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
	return c, errNone
}

// dead returns the dead item id of queue, or the error class.
func (m *model) dead(queue string, id claim.ItemID) (*mitem, errClass) {
	if queue == "" {
		return nil, errInvalid
	}
	it := m.items[id]
	if it == nil || it.queue != queue || it.state != claim.Dead {
		return nil, errNotFound
	}
	return it, errNone
}

// requeueDead applies RequeueDead.
func (m *model) requeueDead(queue string, id claim.ItemID) (claim.Item, errClass) {
	it, class := m.dead(queue, id)
	if it == nil {
		return claim.Item{}, class
	}
	it.state, it.attempts, it.visibleAt, it.deadAt = claim.Visible, 0, m.now, time.Time{}
	return m.snapshot(it), errNone
}

// deleteDead applies DeleteDead.
func (m *model) deleteDead(queue string, id claim.ItemID) errClass {
	it, class := m.dead(queue, id)
	if it != nil {
		delete(m.items, id)
	}
	return class
}

// diffItem describes how got differs from want, or returns "". Times are
// compared as instants, payloads by content (nil equals empty), and the
// reason of a lost claim's failure is the store's own words.
func diffItem(got, want claim.Item) string {
	switch {
	case got.ID != want.ID:
		return fmt.Sprintf("ID %d, want %d", got.ID, want.ID)
	case !slices.Equal(got.Tags, want.Tags) || !bytes.Equal(got.Metadata, want.Metadata):
		return fmt.Sprintf("tags/metadata %q/%q, want %q/%q", got.Tags, got.Metadata, want.Tags, want.Metadata)
	case got.Queue != want.Queue || got.Key != want.Key || got.Kind != want.Kind:
		return fmt.Sprintf("queue/key/kind %q/%q/%q, want %q/%q/%q", got.Queue, got.Key, got.Kind, want.Queue, want.Key, want.Kind)
	case !bytes.Equal(got.Payload, want.Payload):
		return fmt.Sprintf("payload %q, want %q", got.Payload, want.Payload)
	case got.State != want.State:
		return fmt.Sprintf("state %v, want %v", got.State, want.State)
	case got.Attempts != want.Attempts || got.MaxAttempts != want.MaxAttempts:
		return fmt.Sprintf("attempts %d of %d, want %d of %d", got.Attempts, got.MaxAttempts, want.Attempts, want.MaxAttempts)
	case got.Priority != want.Priority || got.Timeout != want.Timeout:
		return fmt.Sprintf("priority/timeout %d/%v, want %d/%v", got.Priority, got.Timeout, want.Priority, want.Timeout)
	case !got.EnqueuedAt.Equal(want.EnqueuedAt):
		return fmt.Sprintf("EnqueuedAt %v, want %v", got.EnqueuedAt, want.EnqueuedAt)
	case !got.VisibleAt.Equal(want.VisibleAt):
		return fmt.Sprintf("VisibleAt %v, want %v", got.VisibleAt, want.VisibleAt)
	case !got.DeadAt.Equal(want.DeadAt):
		return fmt.Sprintf("DeadAt %v, want %v", got.DeadAt, want.DeadAt)
	case len(got.History) != len(want.History):
		return fmt.Sprintf("history %+v, want %+v", got.History, want.History)
	}
	for i, f := range got.History {
		w := want.History[i]
		if f.Attempt != w.Attempt || f.Owner != w.Owner || !f.At.Equal(w.At) || f.Lost != w.Lost || (!w.Lost && f.Reason != w.Reason) {
			return "history[" + strconv.Itoa(i) + "] " + fmt.Sprintf("%+v, want %+v", f, w)
		}
	}
	return ""
}

// diffClaim describes how got differs from want, or returns "".
func diffClaim(got, want claim.Claim) string {
	if got.Queue != want.Queue || got.Item != want.Item || got.Owner != want.Owner || !bytes.Equal(got.Payload, want.Payload) ||
		got.Attempt != want.Attempt || got.MaxAttempts != want.MaxAttempts || got.Priority != want.Priority ||
		got.Timeout != want.Timeout || !got.ExpiresAt.Equal(want.ExpiresAt) || got.Ref != want.Ref {
		return fmt.Sprintf("%+v, want %+v", got, want)
	}
	return ""
}

// nextDeadline returns the earliest instant after now at which a delay or
// a claim's lease ends.
func (m *model) nextDeadline() (time.Time, bool) {
	var next time.Time
	for _, it := range m.items {
		at := it.expires
		if it.state == claim.Visible && it.visibleAt.After(m.now) {
			at = it.visibleAt
		}
		if !at.IsZero() && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	return next, !next.IsZero()
}
