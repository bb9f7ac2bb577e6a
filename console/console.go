package console

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/lock/election"
	"github.com/leasehold/lease/lock/lockprovider"
)

// Defaults and bounds for Config's limits.
const (
	DefaultPageSize     = 50
	MaxPageSize         = 500
	DefaultBulkLimit    = 100
	DefaultPayloadLimit = 64 << 10
	// keyScanPages bounds the pages of items a key filter reads in one
	// request, since no store looks items up by key.
	keyScanPages = 10
)

// Config says what the console shows and what it may do. Every source is
// optional; the console leaves out the pages it has no source for: they
// are not in its navigation, and answer 404 Not Found (the queues page, at
// the root, and the queue and item pages need Broker; the locks page
// Locks or Elections, and shows the section of each only when it is set;
// the leases and audit pages Service). A Config is a plain value; New
// keeps its own copies of its slices.
type Config struct {
	// Service is the source of leases and the audit trail.
	Service *lease.Service
	// Broker is the source of queues and items, and what actions act on.
	Broker *claim.Broker
	// Queues are queue names always listed, for a store that cannot list
	// its queues (claim.Capabilities.Queues false); a store that can lists
	// its own, and these are added to the first page.
	Queues []string
	// Recorder, when set, is the source of the throughput and failure-rate
	// charts: the embedding program attaches it to the Broker with
	// claim.WithObserver, alone or joined to other observers by
	// lease.Observers.
	Recorder *Recorder
	// Locks lists the locks held (lock.Memory and the PostgreSQL and etcd
	// providers are Inspectors). If it is also a lockprovider.WaitInspector
	// (lock.Memory is), each lock's waiters are shown too.
	Locks lockprovider.Inspector
	// Elections are shown with their leaders, and their candidates when
	// their provider is a lockprovider.WaitInspector.
	Elections []*election.Election
	// Actions switches the actions on. Without it the console is read-only
	// and refuses every POST with 403.
	Actions bool
	// Authorize decides whether a request may act; New refuses Actions
	// without it: the embedding program says who may act.
	Authorize func(*http.Request) bool
	// PageSize is the rows per page (DefaultPageSize when 0, at most
	// MaxPageSize); BulkLimit the most items one bulk action touches
	// (DefaultBulkLimit when 0, at most MaxPageSize); PayloadLimit the
	// most bytes of a payload shown (DefaultPayloadLimit when 0).
	PageSize, BulkLimit, PayloadLimit int
	// Now is the clock of the pages' "as of" line and of lease times
	// remaining; the Service's clock when nil and a Service is set, else
	// the system clock.
	Now func() time.Time
}

// Handler serves the console. Create one with New. It is safe for
// concurrent use; each request reads its sources afresh.
type Handler struct {
	cfg     Config
	actions http.Handler // the action endpoint behind cross-origin protection
}

// New returns the console's Handler for cfg, or an error naming the field
// of cfg that is wrong: a Config with no source at all (no Service, Broker,
// Locks or Elections), a negative or too large PageSize, BulkLimit or
// PayloadLimit, a nil Elections entry, or Actions without Authorize (an
// action must be authorized by the embedding program). The errors are
// *lease.Error values with code LS_INVALID_ARGUMENT.
func New(cfg Config) (*Handler, error) {
	if cfg.Service == nil && cfg.Broker == nil && cfg.Locks == nil && len(cfg.Elections) == 0 {
		return nil, invalidConfig("Service", "no source: set at least one of Service, Broker, Locks and Elections")
	}
	if cfg.Actions && cfg.Authorize == nil {
		return nil, invalidConfig("Authorize", "must be set when Actions is on: the embedding program says who may act")
	}
	for i, e := range cfg.Elections {
		if e == nil {
			return nil, invalidConfig(fmt.Sprintf("Elections[%d]", i), "must not be nil")
		}
	}
	cfg.Queues = append([]string(nil), cfg.Queues...)
	cfg.Elections = append([]*election.Election(nil), cfg.Elections...)
	for _, b := range []struct {
		field     string
		n         *int
		def, most int
	}{
		{"PageSize", &cfg.PageSize, DefaultPageSize, MaxPageSize},
		{"BulkLimit", &cfg.BulkLimit, DefaultBulkLimit, MaxPageSize},
		{"PayloadLimit", &cfg.PayloadLimit, DefaultPayloadLimit, 1 << 30},
	} {
		switch {
		case *b.n < 0 || *b.n > b.most:
			return nil, invalidConfig(b.field, fmt.Sprintf("%d is not between 0 (the default, %d) and %d", *b.n, b.def, b.most))
		case *b.n == 0:
			*b.n = b.def
		}
	}
	if cfg.Now == nil {
		if cfg.Service != nil {
			cfg.Now = cfg.Service.Clock().Now
		} else {
			cfg.Now = time.Now
		}
	}
	h := &Handler{cfg: cfg}
	h.actions = http.NewCrossOriginProtection().Handler(http.HandlerFunc(h.serveAction))
	return h, nil
}

// invalidConfig is the error of New for a wrong field of Config.
func invalidConfig(field, detail string) error {
	return &lease.Error{Package: "console", Code: lease.CodeInvalidArgument, Op: "new", Field: field, Detail: detail}
}

// ServeHTTP routes a request to its page: "/" (queues), "/queue", "/item",
// "/locks", "/leases", "/audit", and "/action" (POST).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "same-origin")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy",
		"default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	p := r.URL.Path
	if p == "" {
		// Mounted under a prefix without its slash: relative links need it.
		// The original path's last segment, with a slash, is where the
		// prefix's root is.
		base := "."
		if u, err := url.ParseRequestURI(r.RequestURI); err == nil && path.Base(u.Path) != "/" {
			base = url.PathEscape(path.Base(u.Path))
		}
		w.Header().Set("Location", base+"/") // relative: http.Redirect would make it absolute, without the prefix
		w.WriteHeader(http.StatusFound)
		return
	}
	if p == "/action" {
		h.actions.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	ctx := r.Context()
	if page, ok := pageOf[p]; ok && !h.has(page) {
		h.fail(w, r, &httpError{http.StatusNotFound, "console: no source of " + page + " configured (" + sourceOf[page] + ")"})
		return
	}
	switch p {
	case "/":
		h.render(w, r, "queues", h.queuesPage(ctx, r))
	case "/queue":
		page, err := h.itemsPage(ctx, r)
		h.renderOr(w, r, "items", page, err)
	case "/item":
		page, err := h.itemPage(ctx, r)
		h.renderOr(w, r, "item", page, err)
	case "/locks":
		h.render(w, r, "locks", h.locksPage(ctx, r))
	case "/leases":
		page, err := h.leasesPage(r)
		h.renderOr(w, r, "leases", page, err)
	case "/audit":
		h.render(w, r, "audit", h.auditPage(r))
	default:
		http.NotFound(w, r)
	}
}

// Header is what every page carries: when it was made and what the
// console can show and do for this request. It is a plain value.
type Header struct {
	Now time.Time `json:"now"`
	// Pages lists the pages the console has sources for, of "queues",
	// "locks", "leases", "audit": the navigation links to these, and
	// the others answer 404 Not Found.
	Pages []string `json:"pages"`
	// Can says which actions the request may take; all false when the
	// console is read-only or the request is not authorized.
	Can Abilities `json:"can"`
}

// Abilities are the actions a request may take, each only when actions are
// on, the request is authorized and the store has the operation. It is a
// plain value.
type Abilities struct {
	Cancel   bool `json:"cancel"`
	Delete   bool `json:"delete"`
	Requeue  bool `json:"requeue"`
	RetryNow bool `json:"retry_now"`
	Pause    bool `json:"pause"`
}

// Any reports whether any action is allowed.
func (a Abilities) Any() bool { return a.Cancel || a.Delete || a.Requeue || a.RetryNow || a.Pause }

// authorized reports whether r may act.
func (h *Handler) authorized(r *http.Request) bool {
	return h.cfg.Actions && h.cfg.Authorize != nil && h.cfg.Broker != nil && h.cfg.Authorize(r)
}

// pageOf names the page each path belongs to, as Header.Pages lists
// them: a path whose page has no source answers 404.
var pageOf = map[string]string{
	"/": "queues", "/queue": "queues", "/item": "queues",
	"/locks": "locks", "/leases": "leases", "/audit": "audit",
}

// pageNames are the pages in the order of the navigation.
var pageNames = []string{"queues", "locks", "leases", "audit"}

// sourceOf names the Config fields each page shows.
var sourceOf = map[string]string{
	"queues": "Config.Broker", "locks": "Config.Locks or Config.Elections",
	"leases": "Config.Service", "audit": "Config.Service",
}

// has reports whether the console has a source for page.
func (h *Handler) has(page string) bool {
	switch page {
	case "queues":
		return h.cfg.Broker != nil
	case "locks":
		return h.cfg.Locks != nil || len(h.cfg.Elections) > 0
	case "leases", "audit":
		return h.cfg.Service != nil
	}
	return false
}

// header returns the Header for r.
func (h *Handler) header(r *http.Request) Header {
	hd := Header{Now: h.cfg.Now()}
	for _, page := range pageNames {
		if h.has(page) {
			hd.Pages = append(hd.Pages, page)
		}
	}
	if h.authorized(r) {
		caps := h.cfg.Broker.Capabilities()
		hd.Can = Abilities{Cancel: true, Delete: true, Requeue: true, RetryNow: caps.RetryNow, Pause: caps.Pause}
	}
	return hd
}

// wantsJSON reports whether r asks for JSON: ?format=json, or an Accept
// header naming application/json without ?format=html.
func wantsJSON(r *http.Request) bool {
	switch r.URL.Query().Get("format") {
	case "json":
		return true
	case "html":
		return false
	}
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

// httpError is a request the console refuses, with its status.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(msg string) error { return &httpError{http.StatusBadRequest, msg} }

// renderOr renders page, or err with its status.
func (h *Handler) renderOr(w http.ResponseWriter, r *http.Request, name string, page any, err error) {
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, name, page)
}

// fail answers err: its status for an httpError, 404 for an item not
// found, 400 for bad input, 500 otherwise.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	if wantsJSON(r) {
		writeJSON(w, status, map[string]string{"error": err.Error()})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = pages["error"].ExecuteTemplate(w, "layout", struct {
		Header
		Status  int
		Message string
	}{h.header(r), status, err.Error()})
}

// render writes page as JSON or as the HTML page name.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, name string, page any) {
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, page)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = pages[name].ExecuteTemplate(w, "layout", page) // the client went away: nothing to do
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

//go:embed templates/*.html
var files embed.FS

// pages are the parsed templates, each page with the layout.
var pages = func() map[string]*template.Template {
	funcs := template.FuncMap{
		"clock": func(t time.Time) string {
			if t.IsZero() {
				return "–"
			}
			return t.UTC().Format("2006-01-02 15:04:05.000")
		},
		"dur": func(d time.Duration) string { return d.Round(time.Millisecond).String() },
		"has": func(list []string, s string) bool {
			for _, x := range list {
				if x == s {
					return true
				}
			}
			return false
		},
		"join": strings.Join,
	}
	out := map[string]*template.Template{}
	for _, name := range []string{"queues", "items", "item", "locks", "leases", "audit", "action", "error"} {
		out[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/"+name+".html"))
	}
	return out
}()

// ctxDone reports whether the request is over, to stop bulk work early.
func ctxDone(ctx context.Context) bool { return ctx.Err() != nil }
