package claimtest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
)

// maxFuzzOps bounds the calls one fuzz input makes.
const maxFuzzOps = 300

// FuzzStore is a fuzz target for the claim.Store contract. A store's fuzz
// function calls it with a factory:
//
//	func FuzzStore(f *testing.F) {
//		claimtest.FuzzStore(f, func(t *testing.T) (claim.Store, *leasetest.FakeClock) {
//			clock := leasetest.NewFakeClock(time.Now())
//			s := newMyStore(clock)
//			t.Cleanup(func() { _ = s.Close() })
//			return s, clock
//		})
//	}
//
// It adds a few seed inputs, then decodes each input into up to 300 calls
// (every Store method but Notify and Close, good and bad input alike, on
// two queues, with live and stale claims) and steps of the clock (some to
// the instant of the next deadline and a nanosecond before it), runs them
// on a fresh store and on the reference model, and compares every result:
// error kinds, items field by field, claims, counts, and after each call
// the whole of both queues. IDs and tokens are the store's to choose; the
// model only checks that they are fresh.
//
// The clock must be a *leasetest.FakeClock that only FuzzStore moves: the
// comparison is exact to the nanosecond, which a store on a real or remote
// clock cannot be. Such a store runs TestStore only.
func FuzzStore(f *testing.F, newStore func(t *testing.T) (claim.Store, *leasetest.FakeClock)) {
	f.Helper()
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, clock := newStore(t)
		if s == nil || clock == nil {
			t.Fatal("claimtest: newStore returned a nil store or clock")
		}
		r := &fuzzRun{t: t, s: s, clock: clock, m: newModel(clock.Now()), data: data}
		r.run()
	})
}

// fuzzSeeds are inputs that reach every call and the deadlines.
var fuzzSeeds = [][]byte{
	{0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 3, 0, 0, 0, 2},
	{0, 2, 4, 1, 1, 2, 0, 1, 0, 0, 0, 10, 0, 1, 0, 0, 0, 10, 0, 1, 3, 0, 5, 2},
	{0, 1, 0, 2, 2, 1, 1, 0, 1, 1, 1, 10, 2, 5, 0, 0, 4, 8, 1, 0, 9, 1, 0, 6, 0, 0, 0, 0},
	{0, 0, 1, 1, 1, 0, 1, 0, 2, 0, 0, 3, 1, 4, 1, 1, 10, 3, 3, 0, 3, 2, 0, 0, 10, 1, 10, 0, 4, 0, 1, 7, 0},
	{0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 1, 2, 1, 3, 2, 1, 3, 1, 4, 2, 11, 2, 0, 2, 4, 1, 3},
	// Two items of priorities 1 and 0; a claim must take the second.
	{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0},
	// A claim expires, the item is claimed again, and the old claim tries
	// to complete it.
	{0, 0, 0, 0, 0, 2, 0, 1, 0, 0, 1, 0, 10, 2, 1, 0, 1, 1, 2, 3, 0, 1, 0},
	// Two items of one key in one batch.
	{0, 1, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0},
	// The claim of an item's only attempt expires.
	{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 10, 2},
	// The claim of an item's only attempt snoozes.
	{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 3, 0, 4, 0},
	// A keyed item, then one of its key that only a dead item blocks: the
	// first gives up its key; then one that a live item blocks.
	{0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0},
}

var (
	fuzzQueues = []string{"fq0", "fq1", ""}
	fuzzKeys   = []string{"", "", "k0", "k1"}
	// fuzzKeyStates are the KeyStates of a keyed item: every state blocks
	// (nil), only a dead item blocks, or only a live one does.
	fuzzKeyStates = [][]claim.State{nil, {claim.Dead}, {claim.Visible, claim.Delayed, claim.Claimed}}
	fuzzDelays    = []time.Duration{0, 0, time.Second, 5 * time.Second, -time.Second}
	fuzzAttempts  = []int{1, 2, 3, 0}
	fuzzPrios     = []int{0, 1, 2, claim.MaxPriority + 1}
	fuzzLeases    = []time.Duration{time.Second, 3 * time.Second, 10 * time.Second, 0}
	fuzzAfters    = []time.Duration{0, time.Second, 3 * time.Second, -time.Second}
	fuzzSteps     = []time.Duration{time.Nanosecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 7 * time.Second}
)

// fuzzRun is one fuzz input's run.
type fuzzRun struct {
	t     *testing.T
	s     claim.Store
	clock *leasetest.FakeClock
	m     *model
	data  []byte
	log   []string // the calls so far, for the failure message
	ids   []claim.ItemID
	refs  []claim.Ref
	lost  lostRecorder
	ended map[claim.Ref]bool // claims the model lost: value is whether cancelled
	seen  int                // Lost calls checked so far
}

func (r *fuzzRun) byte() int {
	if len(r.data) == 0 {
		return 0
	}
	b := r.data[0]
	r.data = r.data[1:]
	return int(b)
}

func pick[T any](r *fuzzRun, from []T) T { return from[r.byte()%len(from)] }

func (r *fuzzRun) id() claim.ItemID {
	if n := r.byte(); n < len(r.ids) {
		return r.ids[n]
	}
	return 1000
}

func (r *fuzzRun) ref() claim.Ref {
	if n := r.byte(); n < len(r.refs) {
		return r.refs[n]
	}
	return claim.Ref{}
}

func (r *fuzzRun) fail(format string, args ...any) {
	r.t.Helper()
	from := max(0, len(r.log)-40)
	r.t.Fatalf("claimtest: after %d calls, the last:\n  %s\n%s", len(r.log), strings.Join(r.log[from:], "\n  "), fmt.Sprintf(format, args...))
}

// class checks that err is of the kind the model expects.
func (r *fuzzRun) class(err error, want errClass) {
	r.t.Helper()
	if got := classify(err); got != want {
		r.fail("got %v (%v), want %v", got, err, want)
	}
}

func (r *fuzzRun) run() {
	r.ended = map[claim.Ref]bool{}
	ctx := r.t.Context()
	for len(r.data) > 0 && len(r.log) < maxFuzzOps {
		switch r.byte() % 12 {
		case 0:
			items := make([]claim.NewItem, 1+r.byte()%3)
			for i := range items {
				queue, key := pick(r, fuzzQueues), r.byte()
				items[i] = claim.NewItem{Queue: queue, Key: fuzzKeys[key%len(fuzzKeys)], Payload: []byte{byte(len(r.log)), byte(i)},
					Delay: pick(r, fuzzDelays), MaxAttempts: pick(r, fuzzAttempts), Priority: pick(r, fuzzPrios)}
				if items[i].Key != "" {
					// The key's byte also picks its states, so that a
					// byte below len(fuzzKeys) means every state blocks.
					items[i].KeyStates = fuzzKeyStates[key/len(fuzzKeys)%len(fuzzKeyStates)]
				}
			}
			r.log = append(r.log, fmt.Sprintf("Enqueue(%+v)", items))
			got, err := r.s.Enqueue(ctx, items)
			want := errNone
			if slices.ContainsFunc(items, badItem) {
				want = errInvalid
			}
			r.class(err, want)
			if err != nil {
				continue
			}
			ids := itemIDs(got)
			wantItems, _, bad := r.m.enqueue(items, ids)
			if bad != "" {
				r.fail("%s", bad)
			}
			for i := range got {
				if d := diffItem(got[i], wantItems[i]); d != "" {
					r.fail("Enqueue item %d: %s", i, d)
				}
			}
			r.ids = append(r.ids, ids...)
		case 1:
			req := claim.ClaimRequest{Queue: pick(r, fuzzQueues), Owner: pick(r, []string{"a", "b", ""}), Limit: r.byte() % 4,
				Lease: pick(r, fuzzLeases), Lost: r.lost.lost}
			r.log = append(r.log, fmt.Sprintf("Claim(%q, %q, limit %d, lease %v)", req.Queue, req.Owner, req.Limit, req.Lease))
			got, err := r.s.Claim(ctx, req)
			want := errNone
			if badClaim(req) {
				want = errInvalid
			}
			r.class(err, want)
			if err != nil {
				continue
			}
			wantClaims, _, bad := r.m.claim(req, got, exactOrder)
			if bad != "" {
				r.fail("%s", bad)
			}
			for i := range got {
				if d := diffClaim(got[i], wantClaims[i]); d != "" {
					r.fail("Claim %d: %s", i, d)
				}
				r.refs = append(r.refs, got[i].Ref)
			}
		case 2:
			ref, d := r.ref(), pick(r, fuzzLeases)
			r.log = append(r.log, fmt.Sprintf("Extend(%v, %v)", ref, d))
			got, err := r.s.Extend(ctx, ref, d)
			want, class := r.m.extend(ref, d)
			r.class(err, class)
			if err == nil && !got.Equal(want) {
				r.fail("Extend: expiry %v, want %v", got, want)
			}
		case 3:
			st := claim.Settlement{Ref: r.ref(), How: claim.Settle(r.byte() % 6), After: pick(r, fuzzAfters), Reason: "r" + fmt.Sprint(len(r.log))}
			r.log = append(r.log, fmt.Sprintf("Settle(%+v)", st))
			err := r.s.Settle(ctx, st)
			r.class(err, r.m.settle(st))
		case 4:
			q, id := pick(r, fuzzQueues), r.id()
			r.log = append(r.log, fmt.Sprintf("Cancel(%q, %d)", q, id))
			r.class(r.s.Cancel(ctx, q, id), r.m.cancel(q, id))
		case 5:
			id := r.id()
			r.log = append(r.log, fmt.Sprintf("Lookup(%d)", id))
			got, err := r.s.Lookup(ctx, id)
			want, class := r.m.lookup(id)
			r.class(err, class)
			if err == nil {
				if d := diffItem(got, want); d != "" {
					r.fail("Lookup: %s", d)
				}
			}
		case 6:
			q := claim.Query{Queue: pick(r, fuzzQueues), State: claim.State(r.byte() % 8), Limit: r.byte() % 4}
			if r.byte()%2 == 1 {
				q.After = r.id()
			}
			r.log = append(r.log, fmt.Sprintf("List(%+v)", q))
			got, err := r.s.List(ctx, q)
			want, class := r.m.list(q)
			r.class(err, class)
			if err == nil {
				r.sameItems("List", got, want)
			}
		case 7:
			q := pick(r, fuzzQueues)
			r.log = append(r.log, fmt.Sprintf("Counts(%q)", q))
			got, err := r.s.Counts(ctx, q)
			want, class := r.m.counts(q)
			r.class(err, class)
			if err == nil && got != want {
				r.fail("Counts: %+v, want %+v", got, want)
			}
		case 8:
			q, id := pick(r, fuzzQueues), r.id()
			r.log = append(r.log, fmt.Sprintf("RequeueDead(%q, %d)", q, id))
			got, err := r.s.RequeueDead(ctx, q, id)
			want, class := r.m.requeueDead(q, id)
			r.class(err, class)
			if err == nil {
				if d := diffItem(got, want); d != "" {
					r.fail("RequeueDead: %s", d)
				}
			}
		case 9:
			q, id := pick(r, fuzzQueues), r.id()
			r.log = append(r.log, fmt.Sprintf("DeleteDead(%q, %d)", q, id))
			r.class(r.s.DeleteDead(ctx, q, id), r.m.deleteDead(q, id))
		case 10:
			r.step(pick(r, fuzzSteps))
		case 11:
			next, ok := r.m.nextDeadline()
			if !ok {
				continue
			}
			d := next.Sub(r.m.now)
			if r.byte()%2 == 1 {
				d-- // a nanosecond short of it
			}
			r.step(d)
		}
		r.checkLost()
		r.checkQueues()
	}
}

// step moves the store's clock and the model's by d.
func (r *fuzzRun) step(d time.Duration) {
	r.t.Helper()
	r.log = append(r.log, fmt.Sprintf("Advance(%v)", d))
	r.clock.Advance(d)
	r.m.advance(r.m.now.Add(d))
	if !r.clock.Now().Equal(r.m.now) {
		r.fail("the clock reads %v, the model %v: only FuzzStore may move the clock", r.clock.Now(), r.m.now)
	}
}

// checkLost checks the store's Lost calls: each for a claim the model says
// ended other than by its Settle, once, with ErrCancelled for a cancel. A
// store need not call Lost at all.
func (r *fuzzRun) checkLost() {
	r.t.Helper()
	for _, l := range r.m.takeLost() {
		r.ended[l.ref] = l.cancelled
	}
	calls := r.lost.get()
	for _, c := range calls[r.seen:] {
		cancelled, ok := r.ended[c.ref]
		if !ok {
			r.fail("Lost called for %v, which the model says is live, settled or called before", c.ref)
		}
		delete(r.ended, c.ref)
		if cancelled != errors.Is(c.cause, claim.ErrCancelled) {
			r.fail("Lost(%v) cause %v: cancelled is %t", c.ref, c.cause, cancelled)
		}
	}
	r.seen = len(calls)
}

// checkQueues compares both queues whole.
func (r *fuzzRun) checkQueues() {
	r.t.Helper()
	for _, q := range fuzzQueues[:2] {
		query := claim.Query{Queue: q, Limit: 1 << 20}
		got, err := r.s.List(r.t.Context(), query)
		if err != nil {
			r.fail("List(%q): %v", q, err)
		}
		want, _ := r.m.list(query)
		r.sameItems("queue "+q, got, want)
	}
}

func (r *fuzzRun) sameItems(what string, got, want []claim.Item) {
	r.t.Helper()
	if len(got) != len(want) {
		r.fail("%s: items %v, want %v", what, itemIDs(got), itemIDs(want))
	}
	for i := range got {
		if d := diffItem(got[i], want[i]); d != "" {
			r.fail("%s: item %d: %s", what, got[i].ID, d)
		}
	}
}
