package console

import (
	"context"
	"html/template"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/leasehold/lease/claim"
)

// QueuesPage is the queues page: every queue with its counts by state and
// paused flag, a page at a time in name order, and the last hour's chart
// of the queues together. It is a plain value built per request.
type QueuesPage struct {
	Header
	Queues []QueueRow `json:"queues"`
	// Next is the After of the next page, "" on the last.
	Next  string `json:"next,omitempty"`
	Error string `json:"error,omitempty"`
	// Activity is the last hour of every queue the Recorder saw, minute by
	// minute, oldest first; nil without a Recorder.
	Activity []Point       `json:"activity,omitempty"`
	Chart    template.HTML `json:"-"`
}

// QueueRow is one queue: its counts and whether it is paused. Paused is
// false, and PausedKnown too, when the store cannot say. It is a plain
// value.
type QueueRow struct {
	Name        string    `json:"name"`
	Visible     int       `json:"visible"`
	Delayed     int       `json:"delayed"`
	Claimed     int       `json:"claimed"`
	Dead        int       `json:"dead"`
	Completed   int       `json:"completed"`
	Cancelled   int       `json:"cancelled"`
	Paused      bool      `json:"paused"`
	PausedAt    time.Time `json:"paused_at,omitzero"`
	PausedKnown bool      `json:"paused_known"`
	Error       string    `json:"error,omitempty"`
}

func rowOf(info claim.QueueInfo, pausedKnown bool) QueueRow {
	c := info.Counts
	return QueueRow{Name: info.Name, Visible: c.Visible, Delayed: c.Delayed, Claimed: c.Claimed, Dead: c.Dead,
		Completed: c.Completed, Cancelled: c.Cancelled, Paused: info.Paused, PausedAt: info.PausedAt, PausedKnown: pausedKnown}
}

// queuesPage lists one page of queues: one call to the store's queue
// listing, or, for a store without one, one Counts per configured queue.
func (h *Handler) queuesPage(ctx context.Context, r *http.Request) QueuesPage {
	p := QueuesPage{Header: h.header(r), Queues: []QueueRow{}}
	b := h.cfg.Broker
	after := r.URL.Query().Get("after")
	if b.Capabilities().Queues {
		infos, err := b.Queues(ctx, claim.QueueQuery{After: after, Limit: h.cfg.PageSize + 1})
		if err != nil {
			p.Error = err.Error()
		}
		if len(infos) > h.cfg.PageSize {
			infos = infos[:h.cfg.PageSize]
			p.Next = infos[len(infos)-1].Name
		}
		for _, info := range infos {
			p.Queues = append(p.Queues, rowOf(info, true))
		}
		if after == "" {
			p.Queues = h.addConfigured(ctx, p.Queues, p.Next)
		}
	} else if after == "" {
		p.Queues = h.addConfigured(ctx, p.Queues, "")
	}
	if h.cfg.Recorder != nil {
		p.Activity = h.cfg.Recorder.Total()
		p.Chart = chart(p.Activity)
	}
	return p
}

// addConfigured adds the configured queues the listing left out (those
// with no items yet, or beyond its page) to the first page, in name order.
func (h *Handler) addConfigured(ctx context.Context, rows []QueueRow, next string) []QueueRow {
	for _, name := range h.cfg.Queues {
		if slices.ContainsFunc(rows, func(q QueueRow) bool { return q.Name == name }) {
			continue
		}
		if next != "" && name <= next {
			continue // on this page had it items: an empty queue
		}
		row := QueueRow{Name: name}
		c, err := h.cfg.Broker.Counts(ctx, name)
		if err != nil {
			row.Error = err.Error()
		}
		rows = append(rows, rowOf(claim.QueueInfo{Name: name, Counts: c}, false))
		rows[len(rows)-1].Error = row.Error
	}
	slices.SortFunc(rows, func(a, b QueueRow) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return rows
}

// queueRow reads one queue's counts and paused flag. With a store that
// lists queues it reads the listing from just before this name: one call
// unless many names sit between (at most lookupPages calls). Else, or if
// the listing fails, it reads the counts alone and the paused flag is
// unknown.
func (h *Handler) queueRow(ctx context.Context, name string) QueueRow {
	b := h.cfg.Broker
	if b.Capabilities().Queues {
		const pageSize, lookupPages = 16, 3
		after := before(name)
		for range lookupPages {
			infos, err := b.Queues(ctx, claim.QueueQuery{After: after, Limit: pageSize})
			if err != nil {
				break
			}
			for _, info := range infos {
				if info.Name == name {
					return rowOf(info, true)
				}
				if info.Name > name {
					// The listing omits a queue with no items that is not
					// paused: an empty, running queue.
					return QueueRow{Name: name, PausedKnown: true}
				}
			}
			if len(infos) < pageSize {
				return QueueRow{Name: name, PausedKnown: true}
			}
			after = infos[len(infos)-1].Name
		}
	}
	c, err := b.Counts(ctx, name)
	row := rowOf(claim.QueueInfo{Name: name, Counts: c}, false)
	if err != nil {
		row.Error = err.Error()
	}
	return row
}

// before returns a valid UTF-8 name below name in byte order with few
// names between them: name with its last rune one lower (or removed).
func before(name string) string {
	r, size := utf8.DecodeLastRuneInString(name)
	prefix := name[:len(name)-size]
	if r == 0 || (r == utf8.RuneError && size <= 1) {
		return prefix
	}
	r--
	if r >= 0xD800 && r <= 0xDFFF { // no surrogate is valid UTF-8
		r = 0xD7FF
	}
	return prefix + string(r)
}
