package console

import (
	"context"
	"html/template"
	"net/http"
	"slices"
	"time"

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
	if b == nil {
		return p
	}
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
// lists queues it is one call, reading the page of names that starts just
// before this one; else (or if that page does not reach it) one Counts.
func (h *Handler) queueRow(ctx context.Context, name string) QueueRow {
	b := h.cfg.Broker
	if b.Capabilities().Queues {
		infos, err := b.Queues(ctx, claim.QueueQuery{After: before(name), Limit: 16})
		if err == nil {
			for _, info := range infos {
				if info.Name == name {
					return rowOf(info, true)
				}
			}
			if len(infos) < 16 {
				// The listing omits a queue with no items that is not
				// paused: an empty, running queue.
				return QueueRow{Name: name, PausedKnown: true}
			}
		}
	}
	c, err := b.Counts(ctx, name)
	row := rowOf(claim.QueueInfo{Name: name, Counts: c}, false)
	if err != nil {
		row.Error = err.Error()
	}
	return row
}

// before returns a name just below name in byte order, so that a listing
// after it starts at name or close to it.
func before(name string) string {
	if name == "" {
		return ""
	}
	last := name[len(name)-1]
	if last == 0 {
		return name[:len(name)-1]
	}
	return name[:len(name)-1] + string([]byte{last - 1, 0xff, 0xff, 0xff, 0xff})
}
