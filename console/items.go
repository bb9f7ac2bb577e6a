package console

import (
	"bytes"
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"strconv"
	"time"

	"github.com/leasehold/lease/claim"
)

// ItemsPage is one queue's page: its counts, its chart, and a page of its
// items in ID order, filtered by state, kind, tag and key. It is a plain
// value built per request.
type ItemsPage struct {
	Header
	Queue QueueRow `json:"queue"`
	// The filters: State is "" for every state.
	State string       `json:"state,omitempty"`
	Kind  string       `json:"kind,omitempty"`
	Tag   string       `json:"tag,omitempty"`
	Key   string       `json:"key,omitempty"`
	After claim.ItemID `json:"after,omitempty"`
	Items []ItemRow    `json:"items"`
	// Next is the After of the next page; 0 on the last.
	Next claim.ItemID `json:"next,omitempty"`
	// Scanned is how many items a key filter read to fill the page; it
	// reads at most a few pages per request, so a page may be short
	// while Next is set.
	Scanned  int           `json:"scanned,omitempty"`
	States   []string      `json:"-"`
	Activity []Point       `json:"activity,omitempty"`
	Chart    template.HTML `json:"-"`
}

// ItemRow is one item in a list. It is a plain value.
type ItemRow struct {
	ID          claim.ItemID `json:"id"`
	Queue       string       `json:"queue"`
	Kind        string       `json:"kind,omitempty"`
	Tags        []string     `json:"tags,omitempty"`
	Key         string       `json:"key,omitempty"`
	State       string       `json:"state"`
	Attempts    int          `json:"attempts"`
	MaxAttempts int          `json:"max_attempts"`
	Priority    int          `json:"priority"`
	EnqueuedAt  time.Time    `json:"enqueued_at"`
	VisibleAt   time.Time    `json:"visible_at,omitzero"`
	DeadAt      time.Time    `json:"dead_at,omitzero"`
	FinishedAt  time.Time    `json:"finished_at,omitzero"`
	LastFailure string       `json:"last_failure,omitempty"`
}

func itemRow(it claim.Item) ItemRow {
	row := ItemRow{ID: it.ID, Queue: it.Queue, Kind: it.Kind, Tags: it.Tags, Key: it.Key, State: it.State.String(),
		Attempts: it.Attempts, MaxAttempts: it.MaxAttempts, Priority: it.Priority, EnqueuedAt: it.EnqueuedAt,
		VisibleAt: it.VisibleAt, DeadAt: it.DeadAt, FinishedAt: it.FinishedAt}
	if n := len(it.History); n > 0 {
		row.LastFailure = it.History[n-1].Reason
	}
	return row
}

// allStates are the states a list can be filtered by, in their order.
var allStates = []claim.State{claim.Visible, claim.Delayed, claim.Claimed, claim.Dead, claim.Completed, claim.Cancelled}

// parseState reads a state's name; "" is every state.
func parseState(s string) (claim.State, error) {
	if s == "" {
		return 0, nil
	}
	for _, st := range allStates {
		if st.String() == s {
			return st, nil
		}
	}
	return 0, badRequest("console: state " + strconv.Quote(s) + " is not a state")
}

// filter is a selection of a queue's items.
type filter struct {
	queue     string
	state     claim.State
	kind, tag string
	key       string
	after     claim.ItemID
}

// parseFilter reads a selection from form values.
func parseFilter(get func(string) string) (filter, error) {
	f := filter{queue: get("queue"), kind: get("kind"), tag: get("tag"), key: get("key")}
	if f.queue == "" {
		return f, badRequest("console: queue is required")
	}
	var err error
	if f.state, err = parseState(get("state")); err != nil {
		return f, err
	}
	if a := get("after"); a != "" {
		n, err := strconv.ParseUint(a, 10, 64)
		if err != nil {
			return f, badRequest("console: after " + strconv.Quote(a) + " is not an item ID")
		}
		f.after = claim.ItemID(n)
	}
	return f, nil
}

// selectItems returns up to limit items of f from f.after on, and the
// After of the next page (0 when there is none) and how many it read. A
// key filter reads up to keyScanPages pages of limit.
func (h *Handler) selectItems(ctx context.Context, f filter, limit int) ([]claim.Item, claim.ItemID, int, error) {
	q := claim.Query{Queue: f.queue, State: f.state, Kind: f.kind, Tag: f.tag, After: f.after, Limit: limit + 1}
	if f.key == "" {
		items, err := h.cfg.Broker.List(ctx, q)
		if err != nil {
			return nil, 0, 0, err
		}
		var next claim.ItemID
		if len(items) > limit {
			items = items[:limit]
			next = items[limit-1].ID
		}
		return items, next, len(items), nil
	}
	var out []claim.Item
	scanned := 0
	q.Limit = limit
	for range keyScanPages {
		items, err := h.cfg.Broker.List(ctx, q)
		if err != nil {
			return nil, 0, scanned, err
		}
		for i, it := range items {
			scanned++
			if it.Key == f.key {
				out = append(out, it)
				if len(out) == limit {
					if i < len(items)-1 || len(items) == limit {
						return out, it.ID, scanned, nil
					}
					return out, 0, scanned, nil
				}
			}
		}
		if len(items) < limit {
			return out, 0, scanned, nil
		}
		q.After = items[len(items)-1].ID
	}
	return out, q.After, scanned, nil
}

// itemsPage lists a page of a queue's items: one call for the queue's
// counts, one for the items (a few with a key filter).
func (h *Handler) itemsPage(ctx context.Context, r *http.Request) (ItemsPage, error) {
	f, err := parseFilter(r.URL.Query().Get)
	if err != nil {
		return ItemsPage{}, err
	}
	p := ItemsPage{Header: h.header(r), Kind: f.kind, Tag: f.tag, Key: f.key, After: f.after, Items: []ItemRow{}}
	if f.state != 0 {
		p.State = f.state.String()
	}
	for _, st := range allStates {
		p.States = append(p.States, st.String())
	}
	p.Queue = h.queueRow(ctx, f.queue)
	items, next, scanned, err := h.selectItems(ctx, f, h.cfg.PageSize)
	if err != nil {
		return ItemsPage{}, err
	}
	p.Next = next
	if f.key != "" {
		p.Scanned = scanned
	}
	for _, it := range items {
		p.Items = append(p.Items, itemRow(it))
	}
	if h.cfg.Recorder != nil {
		p.Activity = h.cfg.Recorder.Queue(f.queue)
		p.Chart = chart(p.Activity)
	}
	return p, nil
}

// ItemPage is one item: its fields, payload, failures and timeline. It is
// a plain value built per request.
type ItemPage struct {
	Header
	Item ItemRow `json:"item"`
	// Payload is the payload as text: indented when it is JSON, else as
	// stored with invalid UTF-8 replaced, cut to the console's
	// PayloadLimit (Truncated says so). PayloadSize is its full size.
	Payload     string         `json:"payload"`
	PayloadJSON bool           `json:"payload_json"`
	PayloadSize int            `json:"payload_size"`
	Truncated   bool           `json:"truncated,omitempty"`
	Metadata    string         `json:"metadata,omitempty"`
	Timeout     time.Duration  `json:"timeout_ns,omitempty"`
	History     []FailureRow   `json:"history"`
	Timeline    []TimelineStep `json:"timeline"`
}

// FailureRow is one failed attempt. It is a plain value.
type FailureRow struct {
	Attempt int       `json:"attempt"`
	Owner   string    `json:"owner"`
	At      time.Time `json:"at"`
	Reason  string    `json:"reason"`
	Lost    bool      `json:"lost"`
}

// TimelineStep is one step of an item's life as the store keeps it:
// "enqueued", "failed", "lost", "visible", "delayed until", "claimed",
// "dead", "completed", "cancelled". It is a plain value.
type TimelineStep struct {
	At     time.Time `json:"at,omitzero"`
	What   string    `json:"what"`
	Detail string    `json:"detail,omitempty"`
}

// itemPage shows one item: one Lookup.
func (h *Handler) itemPage(ctx context.Context, r *http.Request) (ItemPage, error) {
	s := r.URL.Query().Get("id")
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return ItemPage{}, badRequest("console: id " + strconv.Quote(s) + " is not an item ID")
	}
	it, err := h.cfg.Broker.Lookup(ctx, claim.ItemID(n))
	if err != nil {
		return ItemPage{}, err
	}
	p := ItemPage{Header: h.header(r), Item: itemRow(it), PayloadSize: len(it.Payload), Timeout: it.Timeout,
		History: []FailureRow{}}
	p.Payload, p.PayloadJSON, p.Truncated = showPayload(it.Payload, h.cfg.PayloadLimit)
	if it.Metadata != nil {
		p.Metadata, _, _ = showPayload(it.Metadata, h.cfg.PayloadLimit)
	}
	for _, f := range it.History {
		p.History = append(p.History, FailureRow{Attempt: f.Attempt, Owner: f.Owner, At: f.At, Reason: f.Reason, Lost: f.Lost})
	}
	p.Timeline = timeline(it)
	return p, nil
}

// timeline orders what the store keeps of an item's life.
func timeline(it claim.Item) []TimelineStep {
	steps := []TimelineStep{{At: it.EnqueuedAt, What: "enqueued"}}
	for _, f := range it.History {
		what := "failed"
		if f.Lost {
			what = "lost"
		}
		steps = append(steps, TimelineStep{At: f.At, What: what,
			Detail: "attempt " + strconv.Itoa(f.Attempt) + " by " + f.Owner + ": " + f.Reason})
	}
	switch it.State {
	case claim.Visible:
		steps = append(steps, TimelineStep{At: it.VisibleAt, What: "visible"})
	case claim.Delayed:
		steps = append(steps, TimelineStep{At: it.VisibleAt, What: "delayed until"})
	case claim.Claimed:
		steps = append(steps, TimelineStep{What: "claimed", Detail: "attempt " + strconv.Itoa(it.Attempts)})
	case claim.Dead:
		steps = append(steps, TimelineStep{At: it.DeadAt, What: "dead"})
	case claim.Completed, claim.Cancelled:
		steps = append(steps, TimelineStep{At: it.FinishedAt, What: it.State.String()})
	}
	return steps
}

// showPayload returns b as text to show: indented JSON when b is JSON,
// else b with invalid UTF-8 replaced; cut to limit bytes.
func showPayload(b []byte, limit int) (text string, isJSON, truncated bool) {
	if len(b) <= limit && json.Valid(b) {
		var buf bytes.Buffer
		if json.Indent(&buf, b, "", "  ") == nil && buf.Len() <= 4*limit {
			return buf.String(), true, false
		}
	}
	if len(b) > limit {
		b, truncated = b[:limit], true // a rune cut in two is replaced below
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD"))), false, truncated
}
