package console

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// The actions, by the name a POST's op field gives.
const (
	OpRetryNow = "retry_now" // Broker.RetryNow: a delayed item claimable now
	OpCancel   = "cancel"    // Broker.Cancel
	OpDelete   = "delete"    // Broker.DeleteDead: a dead letter deleted
	OpRequeue  = "requeue"   // Broker.RequeueDead: a dead letter requeued
	OpPause    = "pause"     // Broker.PauseQueue
	OpResume   = "resume"    // Broker.ResumeQueue
)

// maxForm bounds an action's request body.
const maxForm = 1 << 20

// ActionResult is what an action did: for each item acted on, its new
// state or the error. It is a plain value, and the JSON document of the
// action endpoint.
type ActionResult struct {
	Header
	Op    string `json:"op"`
	Queue string `json:"queue"`
	// Results has one entry per item, in the order acted on; empty for
	// pause and resume.
	Results []ItemResult `json:"results"`
	// Error is the error of a pause or resume, or why a bulk selection
	// failed.
	Error string `json:"error,omitempty"`
	// Done and Failed count the items acted on and those refused.
	Done   int `json:"done"`
	Failed int `json:"failed"`
	// Outcome is what a pause or resume did to the queue: "paused",
	// "created paused" (the queue had no items: a paused queue was
	// created, and the queues page lists it), "already paused",
	// "resumed" or "not paused" (the last two without a change). It is
	// "paused" or "resumed" when the store cannot say how the queue was
	// before, and empty for the item actions and on an error.
	Outcome string `json:"outcome,omitempty"`
	// Message says what the action did, in a sentence.
	Message string `json:"message"`
}

// Outcomes of a pause or resume, as ActionResult.Outcome gives them.
const (
	OutcomePaused        = "paused"
	OutcomeCreatedPaused = "created paused"
	OutcomeAlreadyPaused = "already paused"
	OutcomeResumed       = "resumed"
	OutcomeNotPaused     = "not paused"
)

// itemDone says what an item action did to each item it was done to.
var itemDone = map[string]string{
	OpRetryNow: "made claimable now", OpCancel: "cancelled", OpDelete: "deleted", OpRequeue: "requeued",
}

// ItemResult is one item's outcome. It is a plain value.
type ItemResult struct {
	ID    claim.ItemID `json:"id"`
	State string       `json:"state,omitempty"` // after the action, when known
	Error string       `json:"error,omitempty"`
}

// serveAction runs an action: POST only (405 otherwise), refused with 403
// unless actions are on and the request is authorized. It has passed the
// cross-origin protection.
func (h *Handler) serveAction(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		h.fail(w, r, &httpError{http.StatusMethodNotAllowed, "console: actions are POST only"})
		return
	}
	if !h.authorized(r) {
		h.fail(w, r, &httpError{http.StatusForbidden, "console: not allowed to act"})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, badRequest("console: bad form: "+err.Error()))
		return
	}
	res, err := h.act(r.Context(), r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res.Header = h.header(r)
	status := http.StatusOK
	if res.Error != "" || (res.Failed > 0 && res.Done == 0) {
		status = http.StatusConflict
	}
	if wantsJSON(r) {
		writeJSON(w, status, res)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = pages["action"].ExecuteTemplate(w, "layout", res)
}

// act runs the action the form of r asks for.
func (h *Handler) act(ctx context.Context, r *http.Request) (ActionResult, error) {
	b := h.cfg.Broker
	op, queue := r.PostForm.Get("op"), r.PostForm.Get("queue")
	res := ActionResult{Op: op, Queue: queue, Results: []ItemResult{}}
	if queue == "" {
		return res, badRequest("console: queue is required")
	}
	var one func(claim.ItemID) (claim.Item, bool, error) // the item after, whether it still exists
	switch op {
	case OpPause, OpResume:
		if !b.Capabilities().Pause {
			return res, badRequest("console: the store cannot pause queues")
		}
		h.pause(ctx, &res)
		return res, nil
	case OpRetryNow:
		if !b.Capabilities().RetryNow {
			return res, badRequest("console: the store cannot retry items now")
		}
		one = func(id claim.ItemID) (claim.Item, bool, error) {
			it, err := b.RetryNow(ctx, queue, id)
			return it, true, err
		}
	case OpRequeue:
		one = func(id claim.ItemID) (claim.Item, bool, error) {
			it, err := b.RequeueDead(ctx, queue, id)
			return it, true, err
		}
	case OpCancel:
		one = func(id claim.ItemID) (claim.Item, bool, error) {
			if err := b.Cancel(ctx, queue, id); err != nil {
				return claim.Item{}, false, err
			}
			it, err := b.Lookup(ctx, id)
			return it, err == nil, nil // removed at once unless the store keeps cancelled items
		}
	case OpDelete:
		one = func(id claim.ItemID) (claim.Item, bool, error) {
			return claim.Item{}, false, b.DeleteDead(ctx, queue, id)
		}
	default:
		return res, badRequest("console: op " + strconv.Quote(op) + " is not an action")
	}
	ids, err := h.targets(ctx, r, queue)
	if err != nil {
		return res, err
	}
	for _, id := range ids {
		if ctxDone(ctx) {
			break
		}
		it, exists, err := one(id)
		ir := ItemResult{ID: id}
		switch {
		case err != nil:
			ir.Error = err.Error()
			res.Failed++
		case exists:
			ir.State = it.State.String()
			res.Done++
		default:
			ir.State = "removed"
			res.Done++
		}
		res.Results = append(res.Results, ir)
	}
	res.Message = strconv.Itoa(res.Done) + " of " + strconv.Itoa(len(res.Results)) + " items " + itemDone[op]
	if res.Failed > 0 {
		res.Message += "; " + strconv.Itoa(res.Failed) + " refused"
	}
	if len(res.Results) < len(ids) {
		res.Message += "; the request ended before the rest"
	}
	return res, nil
}

// pause pauses or resumes res.Queue, as res.Op says, and says what that
// changed, from the queue's state just before.
func (h *Handler) pause(ctx context.Context, res *ActionResult) {
	b, queue := h.cfg.Broker, res.Queue
	before := h.queueRow(ctx, queue)
	known := before.PausedKnown && before.Error == ""
	empty := before.Visible+before.Delayed+before.Claimed+before.Dead+before.Completed+before.Cancelled == 0
	f, outcome, msg := b.PauseQueue, OutcomePaused, "paused: its workers take nothing until it is resumed"
	switch {
	case res.Op == OpResume:
		f, outcome, msg = b.ResumeQueue, OutcomeResumed, "resumed: its workers take its items again"
		if known && !before.Paused {
			outcome, msg = OutcomeNotPaused, "was not paused: nothing changed"
		}
	case known && before.Paused:
		outcome, msg = OutcomeAlreadyPaused, "was already paused: nothing changed"
	case known && empty:
		outcome, msg = OutcomeCreatedPaused, "had no items: a paused queue was created, and its workers take nothing until it is resumed"
	}
	if err := f(ctx, queue); err != nil {
		res.Error, res.Message = err.Error(), res.Op+" of queue "+queue+" failed"
		return
	}
	res.Outcome, res.Message = outcome, "queue "+queue+" "+msg
}

// targets returns the items an action is for: the id fields, or with
// selection=filter the items the filter fields select; at most the
// console's BulkLimit either way.
func (h *Handler) targets(ctx context.Context, r *http.Request, queue string) ([]claim.ItemID, error) {
	if r.PostForm.Get("selection") == "filter" {
		f, err := parseFilter(r.PostForm.Get)
		if err != nil {
			return nil, err
		}
		items, _, _, err := h.selectItems(ctx, f, h.cfg.BulkLimit)
		if err != nil {
			return nil, err
		}
		ids := make([]claim.ItemID, len(items))
		for i, it := range items {
			ids[i] = it.ID
		}
		return ids, nil
	}
	raw := r.PostForm["id"]
	if len(raw) == 0 {
		return nil, badRequest("console: no item selected")
	}
	if len(raw) > h.cfg.BulkLimit {
		return nil, badRequest("console: " + strconv.Itoa(len(raw)) + " items selected, more than the limit of " +
			strconv.Itoa(h.cfg.BulkLimit))
	}
	ids := make([]claim.ItemID, 0, len(raw))
	for _, s := range raw {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n == 0 {
			return nil, badRequest("console: id " + strconv.Quote(s) + " is not an item ID")
		}
		ids = append(ids, claim.ItemID(n))
	}
	return ids, nil
}

// statusOf maps an error to an HTTP status.
func statusOf(err error) int {
	var he *httpError
	switch {
	case errors.As(err, &he):
		return he.status
	case errors.Is(err, claim.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, lease.ErrInvalidArgument):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}
