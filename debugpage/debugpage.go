// Package debugpage serves a read-only page showing the live state of a
// lease.Service and what is built on it: its leases and their keys, the
// holders of locks, the counts and dead letters of claim queues, and the
// recent audit trail. People get HTML; tools get JSON with ?format=json or
// an Accept header asking for application/json.
//
// Like net/http/pprof and expvar it uses net/http only, and like them it
// shows internal state (holders, keys, audit reasons): mount it behind the
// service's own authentication, never on a public listener.
//
//	mux.Handle("/debug/lease", debugpage.New(debugpage.Config{Service: svc, Broker: broker, Queues: []string{"mail"}}))
//
// Deprecated: package console shows all this page shows and more (items,
// payloads, charts, waiters, candidates, actions behind an authorizer),
// read-only unless told otherwise. This package keeps working as it is
// and gains nothing new.
package debugpage

import (
	"context"
	"embed"
	"encoding/json"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/lock/lockprovider"
)

// Defaults for Config's limits.
const (
	DefaultLeaseLimit = 200
	DefaultAuditLimit = 50
	DefaultLockLimit  = 200
	DefaultDeadLimit  = 20
)

// Config says what the page shows. Every source is optional; the page
// leaves out the sections it has no source for. A Config is a plain value,
// safe to share; New keeps its own copy of Queues.
type Config struct {
	// Service is the source of the leases, their keys and the audit
	// trail.
	Service *lease.Service
	// Locks, when set, lists the locks held and their holders (a
	// lock.Memory is one).
	Locks lockprovider.Inspector
	// Broker and Queues give the claim queues to show: a Broker does not
	// list its queues, so the page shows those named.
	Broker *claim.Broker
	Queues []string
	// The most leases, locks, dead letters per queue and audit decisions
	// shown; zero means the default. The page says how many leases there
	// are in all when it shows fewer: it lists every lease to count them,
	// a copy of the lease table, so on a service of millions of leases a
	// request costs what Service.List costs.
	LeaseLimit, LockLimit, DeadLimit, AuditLimit int
}

// Handler serves the page. Create one with New. It is safe for concurrent
// use; each request reads its sources afresh and changes nothing.
type Handler struct {
	cfg Config
}

// New returns the page's Handler for cfg.
func New(cfg Config) *Handler {
	cfg.Queues = append([]string(nil), cfg.Queues...)
	def := func(n *int, d int) {
		if *n <= 0 {
			*n = d
		}
	}
	def(&cfg.LeaseLimit, DefaultLeaseLimit)
	def(&cfg.LockLimit, DefaultLockLimit)
	def(&cfg.DeadLimit, DefaultDeadLimit)
	def(&cfg.AuditLimit, DefaultAuditLimit)
	return &Handler{cfg: cfg}
}

// Page is what the page shows, and the JSON document it serves. It is a
// plain value built for each request, safe to share once built; its slices
// are its own.
type Page struct {
	Now         time.Time  `json:"now"`
	Revision    int64      `json:"revision"`
	LeasesTotal int        `json:"leases_total"`
	Leases      []LeaseRow `json:"leases"`
	Locks       []LockRow  `json:"locks"`
	LocksError  string     `json:"locks_error,omitempty"`
	Queues      []QueueRow `json:"queues"`
	Audit       []AuditRow `json:"audit"`
	// Sections says which sources the page has: "leases", "locks",
	// "queues", "audit".
	Sections []string `json:"sections"`
}

// LeaseRow is one live lease. It is a plain value; Keys is its own copy.
type LeaseRow struct {
	ID        lease.ID      `json:"id"`
	Holder    string        `json:"holder"`
	Purpose   string        `json:"purpose"`
	TTL       time.Duration `json:"ttl_ns"`
	Remaining time.Duration `json:"remaining_ns"`
	ExpiresAt time.Time     `json:"expires_at"`
	Keys      []string      `json:"keys"`
}

// LockRow is one lock held. It is a plain value, safe to copy and share.
type LockRow struct {
	Name        string    `json:"name"`
	ExecutionID string    `json:"execution_id"`
	Token       uint64    `json:"token"`
	ExpiresAt   time.Time `json:"expires_at"`
}

// AuditRow is one audit decision. It is a plain value, safe to copy and
// share.
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

// QueueRow is one claim queue: its counts and its oldest dead letters. It
// is a plain value; DeadLetters is its own.
type QueueRow struct {
	Name        string       `json:"name"`
	Visible     int          `json:"visible"`
	Delayed     int          `json:"delayed"`
	Claimed     int          `json:"claimed"`
	Dead        int          `json:"dead"`
	DeadLetters []DeadLetter `json:"dead_letters"`
	Error       string       `json:"error,omitempty"`
}

// DeadLetter is one dead item of a queue. It is a plain value, safe to
// copy and share.
type DeadLetter struct {
	ID          claim.ItemID `json:"id"`
	Attempts    int          `json:"attempts"`
	DeadAt      time.Time    `json:"dead_at"`
	LastFailure string       `json:"last_failure"`
}

// ServeHTTP serves the page for GET and HEAD and answers 405 Method Not
// Allowed to every other method.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed: the debug page is read-only", http.StatusMethodNotAllowed)
		return
	}
	p := h.Build(r.Context())
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if wantsJSON(r) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(p) // the client went away: nothing to do
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = page.Execute(w, p)
}

// wantsJSON reports whether r asks for JSON.
func wantsJSON(r *http.Request) bool {
	switch r.URL.Query().Get("format") {
	case "json":
		return true
	case "html":
		return false
	}
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

// Build reads the sources and returns the page. Sources that fail are
// reported in the page, not as an error.
func (h *Handler) Build(ctx context.Context) Page {
	c := h.cfg
	p := Page{Leases: []LeaseRow{}, Locks: []LockRow{}, Queues: []QueueRow{}, Audit: []AuditRow{}}
	if svc := c.Service; svc != nil {
		p.Sections = append(p.Sections, "leases", "audit")
		p.Now = svc.Clock().Now()
		p.Revision = svc.Revision()
		all := svc.List()
		p.LeasesTotal = len(all)
		for _, l := range all[:min(len(all), c.LeaseLimit)] {
			p.Leases = append(p.Leases, LeaseRow{ID: l.ID, Holder: l.Holder, Purpose: l.Purpose.String(),
				TTL: l.TTL, Remaining: l.Remaining(p.Now), ExpiresAt: l.ExpiresAt, Keys: append([]string{}, l.Keys...)})
		}
		audit := svc.Audit()
		for i := len(audit) - 1; i >= 0 && len(p.Audit) < c.AuditLimit; i-- {
			d := audit[i] // newest first
			p.Audit = append(p.Audit, AuditRow{Timestamp: d.Timestamp, Revision: d.Revision, LeaseID: d.LeaseID,
				Action: d.Action, Allowed: d.Allowed, Code: d.Code, Holder: d.Holder, Reason: d.Reason, TraceID: d.TraceID})
		}
	}
	if c.Locks != nil {
		p.Sections = append(p.Sections, "locks")
		held, err := c.Locks.Held(ctx, "", c.LockLimit)
		if err != nil {
			p.LocksError = err.Error()
		}
		for _, l := range held {
			p.Locks = append(p.Locks, LockRow{Name: l.Name, ExecutionID: l.ExecutionID, Token: l.Token, ExpiresAt: l.ExpiresAt})
		}
	}
	if c.Broker != nil {
		p.Sections = append(p.Sections, "queues")
		for _, q := range c.Queues {
			p.Queues = append(p.Queues, queueRow(ctx, c.Broker, q, c.DeadLimit))
		}
	}
	if p.Now.IsZero() {
		p.Now = time.Now()
	}
	return p
}

func queueRow(ctx context.Context, b *claim.Broker, queue string, limit int) QueueRow {
	row := QueueRow{Name: queue, DeadLetters: []DeadLetter{}}
	counts, err := b.Counts(ctx, queue)
	if err != nil {
		row.Error = err.Error()
		return row
	}
	row.Visible, row.Delayed, row.Claimed, row.Dead = counts.Visible, counts.Delayed, counts.Claimed, counts.Dead
	if row.Dead == 0 {
		return row
	}
	dead, err := b.List(ctx, claim.Query{Queue: queue, State: claim.Dead, Limit: limit})
	if err != nil {
		row.Error = err.Error()
		return row
	}
	for _, it := range dead {
		d := DeadLetter{ID: it.ID, Attempts: it.Attempts, DeadAt: it.DeadAt}
		if n := len(it.History); n > 0 {
			d.LastFailure = it.History[n-1].Reason
		}
		row.DeadLetters = append(row.DeadLetters, d)
	}
	return row
}

//go:embed page.html
var files embed.FS

var page = template.Must(template.New("page.html").Funcs(template.FuncMap{
	"has": func(p Page, s string) bool {
		for _, x := range p.Sections {
			if x == s {
				return true
			}
		}
		return false
	},
	"clock": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000") },
	"dur":   func(d time.Duration) string { return d.Round(time.Millisecond).String() },
	"join":  strings.Join,
}).ParseFS(files, "page.html"))
