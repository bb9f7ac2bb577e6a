package console

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock/election"
	"github.com/leasehold/lease/lock/lockprovider"
)

// LocksPage is the locks page: the locks held, a page in name order from a
// prefix, and each configured election's leader. It is a plain value built
// per request.
type LocksPage struct {
	Header
	Prefix    string        `json:"prefix,omitempty"`
	Locks     []LockRow     `json:"locks"`
	Error     string        `json:"error,omitempty"`
	Elections []ElectionRow `json:"elections"`
	// HasLocks and HasElections say whether the console has a source of
	// locks (Config.Locks) and of elections (Config.Elections): the page
	// shows the section of each only when it has.
	HasLocks     bool `json:"-"`
	HasElections bool `json:"-"`
}

// LockRow is one lock held. It is a plain value.
type LockRow struct {
	Name        string        `json:"name"`
	ExecutionID string        `json:"execution_id"`
	Token       uint64        `json:"token"`
	ExpiresAt   time.Time     `json:"expires_at"`
	Remaining   time.Duration `json:"remaining_ns"`
	Value       string        `json:"value,omitempty"`
	// Waiters are the first callers waiting for the lock, next in line
	// first, when the source is a lockprovider.WaitInspector; WaitersKnown says
	// whether it is.
	Waiters      []WaiterRow `json:"waiters,omitempty"`
	WaitersKnown bool        `json:"waiters_known"`
}

// WaiterRow is one caller waiting for a lock or a leadership. It is a
// plain value.
type WaiterRow struct {
	ExecutionID string        `json:"execution_id,omitempty"`
	Value       string        `json:"value,omitempty"`
	Since       time.Time     `json:"since"`
	Waited      time.Duration `json:"waited_ns"`
}

// maxWaitersShown bounds the waiters listed per lock or election.
const maxWaitersShown = 10

// ElectionRow is one election and its leader, if any. It is a plain value.
type ElectionRow struct {
	Name      string        `json:"name"`
	Leader    bool          `json:"has_leader"`
	Value     string        `json:"value,omitempty"`
	Token     uint64        `json:"token,omitempty"`
	ExpiresAt time.Time     `json:"expires_at,omitzero"`
	Remaining time.Duration `json:"remaining_ns,omitempty"`
	// Candidates wait behind the leader, next in line first, when the
	// election's provider can list them (CandidatesKnown).
	Candidates      []WaiterRow `json:"candidates,omitempty"`
	CandidatesKnown bool        `json:"candidates_known"`
	Error           string      `json:"error,omitempty"`
}

// text shows a value: as it is when it is UTF-8, else quoted.
func text(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strconv.Quote(string(b))
}

// locksPage reads one page of locks (one call) and each election's leader
// (one call each).
func (h *Handler) locksPage(ctx context.Context, r *http.Request) LocksPage {
	p := LocksPage{Header: h.header(r), Prefix: r.URL.Query().Get("prefix"), Locks: []LockRow{}, Elections: []ElectionRow{},
		HasLocks: h.cfg.Locks != nil, HasElections: len(h.cfg.Elections) > 0}
	if h.cfg.Locks != nil {
		held, err := h.cfg.Locks.Held(ctx, p.Prefix, h.cfg.PageSize)
		if err != nil {
			p.Error = err.Error()
		}
		waits, _ := h.cfg.Locks.(lockprovider.WaitInspector)
		for _, l := range held {
			row := LockRow{Name: l.Name, ExecutionID: l.ExecutionID, Token: l.Token,
				ExpiresAt: l.ExpiresAt, Remaining: l.ExpiresAt.Sub(p.Now), Value: text(l.Value)}
			if waits != nil {
				// One call per lock shown, a page at most: a lock's
				// waiters are the question during an incident.
				ws, err := waits.Waiting(ctx, l.Name, maxWaitersShown)
				row.WaitersKnown = err == nil
				for _, w := range ws {
					row.Waiters = append(row.Waiters, WaiterRow{ExecutionID: w.ExecutionID, Since: w.Since, Waited: p.Now.Sub(w.Since)})
				}
			}
			p.Locks = append(p.Locks, row)
		}
	}
	for _, e := range h.cfg.Elections {
		row := ElectionRow{Name: e.Name()}
		ld, err := e.Leader(ctx)
		switch {
		case errors.Is(err, election.ErrNoLeader):
		case err != nil:
			row.Error = err.Error()
		default:
			row.Leader, row.Value, row.Token = true, text(ld.Value), ld.Token
			row.ExpiresAt, row.Remaining = ld.ExpiresAt, ld.ExpiresAt.Sub(p.Now)
		}
		if cs, err := e.Candidates(ctx, maxWaitersShown); err == nil {
			row.CandidatesKnown = true
			for _, c := range cs {
				row.Candidates = append(row.Candidates, WaiterRow{Value: text(c.Value), Since: c.Since, Waited: p.Now.Sub(c.Since)})
			}
		}
		p.Elections = append(p.Elections, row)
	}
	return p
}

// LeasesPage is a page of the live leases in ID order. It is a plain
// value built per request.
type LeasesPage struct {
	Header
	Total  int        `json:"total"`
	After  lease.ID   `json:"after,omitempty"`
	Leases []LeaseRow `json:"leases"`
	Next   lease.ID   `json:"next,omitempty"` // the After of the next page; 0 on the last
}

// LeaseRow is one live lease. It is a plain value.
type LeaseRow struct {
	ID        lease.ID      `json:"id"`
	Holder    string        `json:"holder"`
	Purpose   string        `json:"purpose"`
	TTL       time.Duration `json:"ttl_ns"`
	Remaining time.Duration `json:"remaining_ns"`
	ExpiresAt time.Time     `json:"expires_at"`
	Keys      []string      `json:"keys"`
}

// leasesPage reads one page of leases with Service.ListAfter.
func (h *Handler) leasesPage(r *http.Request) (LeasesPage, error) {
	svc := h.cfg.Service
	p := LeasesPage{Header: h.header(r), Leases: []LeaseRow{}}
	if a := r.URL.Query().Get("after"); a != "" {
		n, err := strconv.ParseUint(a, 10, 64)
		if err != nil {
			return p, badRequest("console: after " + strconv.Quote(a) + " is not a lease ID")
		}
		p.After = lease.ID(n)
	}
	p.Total = svc.ActiveCount()
	page, err := svc.ListAfter(r.Context(), p.After, h.cfg.PageSize+1)
	if err != nil {
		return p, err
	}
	if len(page) > h.cfg.PageSize {
		page = page[:h.cfg.PageSize]
		p.Next = page[len(page)-1].ID
	}
	for _, l := range page {
		p.Leases = append(p.Leases, LeaseRow{ID: l.ID, Holder: l.Holder, Purpose: l.Purpose.String(), TTL: l.TTL,
			Remaining: l.Remaining(p.Now), ExpiresAt: l.ExpiresAt, Keys: append([]string{}, l.Keys...)})
	}
	return p, nil
}

// AuditPage is the audit trail, newest first, filtered. It is a plain
// value built per request.
type AuditPage struct {
	Header
	// The filters: Holder and Action match exactly, Lease the lease's ID,
	// Denied shows refused decisions only.
	Holder    string     `json:"holder,omitempty"`
	Action    string     `json:"action,omitempty"`
	Lease     lease.ID   `json:"lease,omitempty"`
	Denied    bool       `json:"denied,omitempty"`
	Decisions []AuditRow `json:"decisions"`
	Actions   []string   `json:"-"`
}

// AuditRow is one audit decision. It is a plain value.
type AuditRow struct {
	Timestamp time.Time    `json:"timestamp"`
	Revision  int64        `json:"revision"`
	LeaseID   lease.ID     `json:"lease_id"`
	Action    lease.Action `json:"action"`
	Allowed   bool         `json:"allowed"`
	Code      lease.Code   `json:"code,omitempty"`
	Holder    string       `json:"holder,omitempty"`
	Reason    string       `json:"reason"`
	TraceID   string       `json:"trace_id,omitempty"`
}

// auditPage filters the service's retained trail, itself bounded by the
// service's audit size, and shows a page of it.
func (h *Handler) auditPage(r *http.Request) AuditPage {
	q := r.URL.Query()
	p := AuditPage{Header: h.header(r), Holder: q.Get("holder"), Action: q.Get("action"), Denied: q.Get("denied") != "",
		Decisions: []AuditRow{},
		Actions: []string{string(lease.ActionGrant), string(lease.ActionRenew), string(lease.ActionUse),
			string(lease.ActionRevoke), string(lease.ActionExpire)}}
	if n, err := strconv.ParseUint(q.Get("lease"), 10, 64); err == nil {
		p.Lease = lease.ID(n)
	}
	trail := h.cfg.Service.Audit()
	for i := len(trail) - 1; i >= 0 && len(p.Decisions) < h.cfg.PageSize; i-- {
		d := trail[i]
		if (p.Holder != "" && d.Holder != p.Holder) || (p.Action != "" && string(d.Action) != p.Action) ||
			(p.Lease != 0 && d.LeaseID != p.Lease) || (p.Denied && d.Allowed) {
			continue
		}
		p.Decisions = append(p.Decisions, AuditRow{Timestamp: d.Timestamp, Revision: d.Revision, LeaseID: d.LeaseID,
			Action: d.Action, Allowed: d.Allowed, Code: d.Code, Holder: d.Holder, Reason: d.Reason, TraceID: d.TraceID})
	}
	return p
}
