package lease

import (
	"log/slog"
	"time"

	"github.com/leasehold/lease/internal/timebase"
)

// Action names what a Decision was about.
type Action string

// The audited actions.
const (
	ActionGrant  Action = "grant"
	ActionRenew  Action = "renew"
	ActionUse    Action = "use"
	ActionRevoke Action = "revoke"
	ActionExpire Action = "expire"
)

// Decision is one audit record: what was asked, of which lease, and whether
// it was allowed. Denied decisions carry the error Code.
type Decision struct {
	LeaseID   ID
	Action    Action
	Allowed   bool
	Code      Code   // "" when allowed
	Reason    string // human-readable; not stable
	Holder    string // the lease's holder, when the lease is known
	TraceID   string
	Timestamp time.Time // the service clock's time of the decision
	Revision  int64     // the service revision after the decision
}

// LogValue implements slog.LogValuer so a Decision logs as a group.
func (d Decision) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.Uint64("lease_id", uint64(d.LeaseID)),
		slog.String("action", string(d.Action)),
		slog.Bool("allowed", d.Allowed),
	}
	if d.Code != "" {
		attrs = append(attrs, slog.String("code", string(d.Code)))
	}
	attrs = append(attrs,
		slog.String("reason", d.Reason),
		slog.String("holder", d.Holder),
		slog.Time("timestamp", d.Timestamp),
		slog.Int64("revision", d.Revision),
	)
	if d.TraceID != "" {
		attrs = append(attrs, slog.String("trace_id", d.TraceID))
	}
	return slog.GroupValue(attrs...)
}

// auditRing keeps the most recent decisions in a fixed buffer so a
// long-running service never grows. A record is what a decision needs and no
// more (96 bytes against a Decision's 136): recording runs on every Use, and
// the Decision is built when it is read.
type auditRing struct {
	buf  []auditRecord
	next int // slot for the next record
	full bool
}

type auditRecord struct {
	id       ID
	action   Action
	reason   string
	holder   string
	trace    string
	at       int64  // service nanoseconds
	revision int64  // after the decision
	err      *Error // nil when allowed
}

func newAuditRing(capacity int) auditRing {
	return auditRing{buf: make([]auditRecord, capacity)}
}

// claim takes the slot for the next record, or returns nil when the ring
// keeps nothing.
func (r *auditRing) claim() *auditRecord {
	if len(r.buf) == 0 {
		return nil
	}
	rec := &r.buf[r.next]
	if r.next++; r.next == len(r.buf) {
		r.next, r.full = 0, true
	}
	return rec
}

// decision builds the Decision a record stands for, on the service's time
// base.
func (rec *auditRecord) decision(base *timebase.Base) Decision {
	d := Decision{
		LeaseID:   rec.id,
		Action:    rec.action,
		Allowed:   rec.err == nil,
		Reason:    rec.reason,
		Holder:    rec.holder,
		TraceID:   rec.trace,
		Timestamp: base.Time(rec.at),
		Revision:  rec.revision,
	}
	if rec.err != nil {
		d.Code = rec.err.Code
		if d.Code == CodePurposeMismatch {
			d.Reason = "granted for " + rec.err.Actual.String() + ", used for " + rec.err.Expected.String()
		}
	}
	return d
}

// snapshot returns the retained decisions, oldest first.
func (r *auditRing) snapshot(base *timebase.Base) []Decision {
	recs := r.buf[:r.next]
	if r.full {
		recs = append(r.buf[r.next:len(r.buf):len(r.buf)], r.buf[:r.next]...)
	}
	out := make([]Decision, len(recs))
	for i := range recs {
		out[i] = recs[i].decision(base)
	}
	return out
}
