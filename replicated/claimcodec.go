package replicated

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// The claim store's binary encoding, of a call (in the log, the value of
// an opClaim command, and in a forwarded reqClaim frame) and of its reply
// (in the answer to a forwarded call):
//
//	call:  claimFormat byte | op byte | present uvarint | fields
//	reply: claimFormat byte | present uvarint | fields
//
// where present has a bit for each field of claimCall (or claimReply), in
// the order the fields are declared, set when the field is there, and the
// fields present follow in that order. Integers are varints (IDs, tokens
// and counts uvarints), durations varint nanoseconds, strings and byte
// slices a uvarint length and their bytes (a byte slice's, a string
// slice's and any other slice's length is stored plus one, so that nil
// and empty stay apart), times a byte (0 for the zero time) then varint
// seconds and uvarint nanoseconds since the Unix epoch, in UTC.
//
// The first byte tells the format: claimFormat, or '{' for the JSON of
// the calls release 0.1.0 wrote into its logs, which a node still applies.
// Any other first byte is a format this build does not know.
//
// Every field of the claim package's values is encoded;
// TestClaimCodecCoversEveryField fails when a field is added there and not
// here.

const claimFormat byte = 1

// claimOpCodes numbers the calls in the encoding; the position is the
// code, and the codes never change meaning.
var claimOpCodes = [...]claimOp{
	1:  callEnqueue,
	2:  callClaim,
	3:  callExtend,
	4:  callSettle,
	5:  callCancel,
	6:  callRequeueDead,
	7:  callDeleteDead,
	8:  callRetryNow,
	9:  callPause,
	10: callResume,
	11: callClean,
	12: callSetRetention,
	13: callLookup,
	14: callList,
	15: callCounts,
	16: callQueues,
}

// claimOpCode returns op's code, 0 for none.
func claimOpCode(op claimOp) byte {
	for i, o := range claimOpCodes {
		if o == op && i > 0 {
			return byte(i)
		}
	}
	return 0
}

// The bits of a call's present field.
const (
	callHasItems = 1 << iota
	callHasRequest
	callHasRef
	callHasLease
	callHasSettlement
	callHasQueue
	callHasID
	callHasLimit
	callHasRetention
	callHasQuery
	callHasQueueQuery
	callHasAll = 1<<iota - 1
)

// The bits of a reply's present field.
const (
	replyHasItems = 1 << iota
	replyHasItem
	replyHasClaims
	replyHasTime
	replyHasN
	replyHasCounts
	replyHasQueues
	replyHasAll = 1<<iota - 1
)

// encodeClaimCall encodes c in the binary format.
func encodeClaimCall(c *claimCall) []byte {
	return appendClaimCall(make([]byte, 0, 32), c)
}

func appendClaimCall(buf []byte, c *claimCall) []byte {
	var present uint64
	if c.Items != nil {
		present |= callHasItems
	}
	if c.Request != nil {
		present |= callHasRequest
	}
	if c.Ref != (claim.Ref{}) {
		present |= callHasRef
	}
	if c.Lease != 0 {
		present |= callHasLease
	}
	if c.Settlement != nil {
		present |= callHasSettlement
	}
	if c.Queue != "" {
		present |= callHasQueue
	}
	if c.ID != 0 {
		present |= callHasID
	}
	if c.Limit != 0 {
		present |= callHasLimit
	}
	if c.Retention != nil {
		present |= callHasRetention
	}
	if c.Query != nil {
		present |= callHasQuery
	}
	if c.QueueQuery != nil {
		present |= callHasQueueQuery
	}
	buf = append(buf, claimFormat, claimOpCode(c.Op))
	buf = binary.AppendUvarint(buf, present)
	if c.Items != nil {
		buf = binary.AppendUvarint(buf, uint64(len(c.Items)))
		for i := range c.Items {
			buf = appendNewItem(buf, &c.Items[i])
		}
	}
	if r := c.Request; r != nil {
		buf = appendString(buf, r.Queue)
		buf = appendString(buf, r.Owner)
		buf = appendInt(buf, r.Limit)
		buf = binary.AppendVarint(buf, int64(r.Lease))
	}
	if present&callHasRef != 0 {
		buf = appendRef(buf, c.Ref)
	}
	if c.Lease != 0 {
		buf = binary.AppendVarint(buf, int64(c.Lease))
	}
	if s := c.Settlement; s != nil {
		buf = appendRef(buf, s.Ref)
		buf = append(buf, byte(s.How))
		buf = binary.AppendVarint(buf, int64(s.After))
		buf = appendString(buf, s.Reason)
	}
	if c.Queue != "" {
		buf = appendString(buf, c.Queue)
	}
	if c.ID != 0 {
		buf = binary.AppendUvarint(buf, uint64(c.ID))
	}
	if c.Limit != 0 {
		buf = appendInt(buf, c.Limit)
	}
	if r := c.Retention; r != nil {
		buf = binary.AppendVarint(buf, int64(r.Completed))
		buf = binary.AppendVarint(buf, int64(r.Cancelled))
		buf = binary.AppendVarint(buf, int64(r.Dead))
	}
	if q := c.Query; q != nil {
		buf = appendString(buf, q.Queue)
		buf = append(buf, byte(q.State))
		buf = appendString(buf, q.Kind)
		buf = appendString(buf, q.Tag)
		buf = binary.AppendUvarint(buf, uint64(q.After))
		buf = appendInt(buf, q.Limit)
	}
	if q := c.QueueQuery; q != nil {
		buf = appendString(buf, q.After)
		buf = appendInt(buf, q.Limit)
	}
	return buf
}

// decodeClaimCall decodes a call in the binary format or, for an entry
// release 0.1.0 wrote, in its JSON. Garbage gets a corruptClaim error.
func decodeClaimCall(data []byte) (*claimCall, error) {
	if len(data) > 0 && data[0] == '{' {
		var c claimCall
		if err := json.Unmarshal(data, &c); err != nil {
			return nil, corruptClaim("call", "JSON of release 0.1.0: "+err.Error())
		}
		return &c, nil
	}
	d := decoder{buf: data}
	if d.byte() != claimFormat {
		return nil, unknownClaimFormat("call", data)
	}
	c := &claimCall{Op: claimOpOf(&d)}
	present := d.present(callHasAll)
	if present&callHasItems != 0 {
		c.Items = decodeSlice(&d, (*decoder).newItem)
	}
	if present&callHasRequest != 0 {
		c.Request = &claimRequest{Queue: d.string(), Owner: d.string(), Limit: d.int(), Lease: d.duration()}
	}
	if present&callHasRef != 0 {
		c.Ref = d.ref()
	}
	if present&callHasLease != 0 {
		c.Lease = d.duration()
	}
	if present&callHasSettlement != 0 {
		c.Settlement = &claim.Settlement{Ref: d.ref(), How: claim.Settle(d.byte()), After: d.duration(), Reason: d.string()}
	}
	if present&callHasQueue != 0 {
		c.Queue = d.string()
	}
	if present&callHasID != 0 {
		c.ID = claim.ItemID(d.uvarint())
	}
	if present&callHasLimit != 0 {
		c.Limit = d.int()
	}
	if present&callHasRetention != 0 {
		c.Retention = &claim.Retention{Completed: d.duration(), Cancelled: d.duration(), Dead: d.duration()}
	}
	if present&callHasQuery != 0 {
		c.Query = &claim.Query{Queue: d.string(), State: claim.State(d.byte()), Kind: d.string(), Tag: d.string(), After: claim.ItemID(d.uvarint()), Limit: d.int()}
	}
	if present&callHasQueueQuery != 0 {
		c.QueueQuery = &claim.QueueQuery{After: d.string(), Limit: d.int()}
	}
	if d.err != nil || len(d.buf) != 0 {
		return nil, corruptClaim("call", "malformed")
	}
	return c, nil
}

// claimOpOf reads an op code.
func claimOpOf(d *decoder) claimOp {
	code := d.byte()
	if int(code) >= len(claimOpCodes) || claimOpCodes[code] == "" {
		d.fail()
		return ""
	}
	return claimOpCodes[code]
}

// peekClaimOp returns the op of an encoded call without decoding the rest.
func peekClaimOp(data []byte) (claimOp, error) {
	if len(data) > 0 && data[0] == '{' {
		var head struct{ Op claimOp }
		if err := json.Unmarshal(data, &head); err != nil {
			return "", corruptClaim("call", "JSON of release 0.1.0: "+err.Error())
		}
		return head.Op, nil
	}
	d := decoder{buf: data}
	if d.byte() != claimFormat {
		return "", unknownClaimFormat("call", data)
	}
	op := claimOpOf(&d)
	if d.err != nil {
		return "", corruptClaim("call", "malformed")
	}
	return op, nil
}

// encodeReply encodes rep in the binary format; nil for none.
func encodeReply(rep *claimReply) []byte {
	if rep == nil {
		return nil
	}
	var present uint64
	if rep.Items != nil {
		present |= replyHasItems
	}
	if rep.Item != nil {
		present |= replyHasItem
	}
	if rep.Claims != nil {
		present |= replyHasClaims
	}
	if !rep.Time.IsZero() {
		present |= replyHasTime
	}
	if rep.N != 0 {
		present |= replyHasN
	}
	if rep.Counts != (claim.Counts{}) {
		present |= replyHasCounts
	}
	if rep.Queues != nil {
		present |= replyHasQueues
	}
	buf := binary.AppendUvarint(append(make([]byte, 0, 64), claimFormat), present)
	if rep.Items != nil {
		buf = binary.AppendUvarint(buf, uint64(len(rep.Items)))
		for i := range rep.Items {
			buf = appendItem(buf, &rep.Items[i])
		}
	}
	if rep.Item != nil {
		buf = appendItem(buf, rep.Item)
	}
	if rep.Claims != nil {
		buf = binary.AppendUvarint(buf, uint64(len(rep.Claims)))
		for i := range rep.Claims {
			buf = appendClaim(buf, &rep.Claims[i])
		}
	}
	if present&replyHasTime != 0 {
		buf = appendClaimTime(buf, rep.Time)
	}
	if rep.N != 0 {
		buf = appendInt(buf, rep.N)
	}
	if present&replyHasCounts != 0 {
		buf = appendCounts(buf, &rep.Counts)
	}
	if rep.Queues != nil {
		buf = binary.AppendUvarint(buf, uint64(len(rep.Queues)))
		for i := range rep.Queues {
			q := &rep.Queues[i]
			buf = appendString(buf, q.Name)
			buf = appendCounts(buf, &q.Counts)
			buf = appendBool(buf, q.Paused)
			buf = appendClaimTime(buf, q.PausedAt)
		}
	}
	return buf
}

// decodeReply decodes a reply encodeReply made. Garbage gets a
// corruptClaim error.
func decodeReply(data []byte) (*claimReply, error) {
	d := decoder{buf: data}
	if d.byte() != claimFormat {
		return nil, unknownClaimFormat("reply", data)
	}
	rep := &claimReply{}
	present := d.present(replyHasAll)
	if present&replyHasItems != 0 {
		rep.Items = decodeSlice(&d, (*decoder).item)
	}
	if present&replyHasItem != 0 {
		rep.Item = &claim.Item{}
		d.item(rep.Item)
	}
	if present&replyHasClaims != 0 {
		rep.Claims = decodeSlice(&d, (*decoder).claim)
	}
	if present&replyHasTime != 0 {
		rep.Time = d.claimTime()
	}
	if present&replyHasN != 0 {
		rep.N = d.int()
	}
	if present&replyHasCounts != 0 {
		rep.Counts = d.counts()
	}
	if present&replyHasQueues != 0 {
		rep.Queues = decodeSlice(&d, func(d *decoder, q *claim.QueueInfo) {
			q.Name = d.string()
			q.Counts = d.counts()
			q.Paused = d.bool()
			q.PausedAt = d.claimTime()
		})
	}
	if d.err != nil || len(d.buf) != 0 {
		return nil, corruptClaim("reply", "malformed")
	}
	return rep, nil
}

// corruptClaim is the error of a claim store call or reply (what) that
// does not decode: a *lease.Error with lease.CodeStorage that also
// matches errCorrupt.
func corruptClaim(what, detail string) error {
	return &lease.Error{Package: "replicated", Code: lease.CodeStorage, Op: "claim store",
		Detail: "corrupt claim store " + what + ": " + detail, Err: errCorrupt}
}

// unknownClaimFormat is the error of a claim store call or reply whose
// first byte names no format this build knows.
func unknownClaimFormat(what string, data []byte) error {
	if len(data) == 0 {
		return corruptClaim(what, "empty")
	}
	return corruptClaim(what, fmt.Sprintf("unknown format %#02x (written by a later release?)", data[0]))
}

func appendInt(buf []byte, v int) []byte { return binary.AppendVarint(buf, int64(v)) }

func appendRef(buf []byte, r claim.Ref) []byte {
	buf = binary.AppendUvarint(buf, uint64(r.Item))
	return binary.AppendUvarint(buf, r.Token)
}

func appendStrings(buf []byte, ss []string) []byte {
	if ss == nil {
		return append(buf, 0)
	}
	buf = binary.AppendUvarint(buf, uint64(len(ss))+1)
	for _, s := range ss {
		buf = appendString(buf, s)
	}
	return buf
}

func appendClaimTime(buf []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(buf, 0)
	}
	buf = binary.AppendVarint(append(buf, 1), t.Unix())
	return binary.AppendUvarint(buf, uint64(t.Nanosecond()))
}

func appendCounts(buf []byte, c *claim.Counts) []byte {
	for _, v := range [...]int{c.Visible, c.Delayed, c.Claimed, c.Dead, c.Completed, c.Cancelled} {
		buf = appendInt(buf, v)
	}
	return buf
}

func appendNewItem(buf []byte, n *claim.NewItem) []byte {
	buf = appendString(buf, n.Queue)
	buf = appendBytes(buf, n.Payload)
	buf = appendString(buf, n.Kind)
	buf = appendStrings(buf, n.Tags)
	buf = appendBytes(buf, n.Metadata)
	buf = appendString(buf, n.Key)
	if n.KeyStates == nil {
		buf = append(buf, 0)
	} else {
		buf = binary.AppendUvarint(buf, uint64(len(n.KeyStates))+1)
		for _, s := range n.KeyStates {
			buf = append(buf, byte(s))
		}
	}
	buf = binary.AppendVarint(buf, int64(n.Delay))
	buf = appendInt(buf, n.MaxAttempts)
	buf = appendInt(buf, n.Priority)
	return binary.AppendVarint(buf, int64(n.Timeout))
}

func appendItem(buf []byte, it *claim.Item) []byte {
	buf = binary.AppendUvarint(buf, uint64(it.ID))
	buf = appendString(buf, it.Queue)
	buf = appendString(buf, it.Kind)
	buf = appendStrings(buf, it.Tags)
	buf = appendBytes(buf, it.Metadata)
	buf = appendString(buf, it.Key)
	buf = appendBytes(buf, it.Payload)
	buf = append(buf, byte(it.State))
	buf = appendInt(buf, it.Attempts)
	buf = appendInt(buf, it.MaxAttempts)
	buf = appendInt(buf, it.Priority)
	buf = binary.AppendVarint(buf, int64(it.Timeout))
	buf = appendClaimTime(buf, it.EnqueuedAt)
	buf = appendClaimTime(buf, it.VisibleAt)
	buf = appendClaimTime(buf, it.DeadAt)
	buf = appendClaimTime(buf, it.FinishedAt)
	if it.History == nil {
		buf = append(buf, 0)
	} else {
		buf = binary.AppendUvarint(buf, uint64(len(it.History))+1)
		for i := range it.History {
			f := &it.History[i]
			buf = appendInt(buf, f.Attempt)
			buf = appendString(buf, f.Owner)
			buf = appendClaimTime(buf, f.At)
			buf = appendString(buf, f.Reason)
			buf = appendBool(buf, f.Lost)
		}
	}
	return appendBool(buf, it.Duplicate)
}

func appendClaim(buf []byte, c *claim.Claim) []byte {
	buf = appendString(buf, c.Queue)
	buf = appendString(buf, c.Kind)
	buf = appendStrings(buf, c.Tags)
	buf = appendBytes(buf, c.Metadata)
	buf = binary.AppendUvarint(buf, uint64(c.Item))
	buf = appendString(buf, c.Owner)
	buf = appendBytes(buf, c.Payload)
	buf = appendInt(buf, c.Attempt)
	buf = appendInt(buf, c.MaxAttempts)
	buf = appendInt(buf, c.Priority)
	buf = binary.AppendVarint(buf, int64(c.Timeout))
	buf = appendClaimTime(buf, c.EnqueuedAt)
	buf = appendClaimTime(buf, c.ExpiresAt)
	return appendRef(buf, c.Ref)
}

func (d *decoder) int() int { return int(d.varint()) }

func (d *decoder) duration() time.Duration { return time.Duration(d.varint()) }

func (d *decoder) bool() bool {
	switch d.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail()
	return false
}

func (d *decoder) ref() claim.Ref {
	return claim.Ref{Item: claim.ItemID(d.uvarint()), Token: d.uvarint()}
}

// present reads the bits of the fields present; a bit outside all is a
// field this build does not know.
func (d *decoder) present(all uint64) uint64 {
	p := d.uvarint()
	if p&^all != 0 {
		d.fail()
	}
	return p
}

// decodeSlice reads a slice's length and that many values with one.
func decodeSlice[T any](d *decoder, one func(*decoder, *T)) []T {
	out := make([]T, d.length())
	for i := range out {
		one(d, &out[i])
	}
	return out
}

// length reads the length of a slice of values that take a byte or more
// each, bounded by what is left.
func (d *decoder) length() uint64 {
	n := d.uvarint()
	if n > uint64(len(d.buf)) {
		d.fail()
		return 0
	}
	return n
}

func (d *decoder) strings() []string {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n-1)
	for i := range out {
		out[i] = d.string()
	}
	return out
}

func (d *decoder) claimTime() time.Time {
	if d.byte() == 0 {
		return time.Time{}
	}
	sec, nsec := d.varint(), d.uvarint()
	if nsec >= uint64(time.Second) {
		d.fail()
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

func (d *decoder) counts() claim.Counts {
	return claim.Counts{Visible: d.int(), Delayed: d.int(), Claimed: d.int(), Dead: d.int(), Completed: d.int(), Cancelled: d.int()}
}

func (d *decoder) newItem(n *claim.NewItem) {
	n.Queue = d.string()
	n.Payload = d.bytes()
	n.Kind = d.string()
	n.Tags = d.strings()
	n.Metadata = d.bytes()
	n.Key = d.string()
	if k := d.count(); k > 0 {
		n.KeyStates = make([]claim.State, k-1)
		for i := range n.KeyStates {
			n.KeyStates[i] = claim.State(d.byte())
		}
	}
	n.Delay = d.duration()
	n.MaxAttempts = d.int()
	n.Priority = d.int()
	n.Timeout = d.duration()
}

func (d *decoder) item(it *claim.Item) {
	it.ID = claim.ItemID(d.uvarint())
	it.Queue = d.string()
	it.Kind = d.string()
	it.Tags = d.strings()
	it.Metadata = d.bytes()
	it.Key = d.string()
	it.Payload = d.bytes()
	it.State = claim.State(d.byte())
	it.Attempts = d.int()
	it.MaxAttempts = d.int()
	it.Priority = d.int()
	it.Timeout = d.duration()
	it.EnqueuedAt = d.claimTime()
	it.VisibleAt = d.claimTime()
	it.DeadAt = d.claimTime()
	it.FinishedAt = d.claimTime()
	if n := d.count(); n > 0 {
		it.History = make([]claim.Failure, n-1)
		for i := range it.History {
			f := &it.History[i]
			f.Attempt = d.int()
			f.Owner = d.string()
			f.At = d.claimTime()
			f.Reason = d.string()
			f.Lost = d.bool()
		}
	}
	it.Duplicate = d.bool()
}

func (d *decoder) claim(c *claim.Claim) {
	c.Queue = d.string()
	c.Kind = d.string()
	c.Tags = d.strings()
	c.Metadata = d.bytes()
	c.Item = claim.ItemID(d.uvarint())
	c.Owner = d.string()
	c.Payload = d.bytes()
	c.Attempt = d.int()
	c.MaxAttempts = d.int()
	c.Priority = d.int()
	c.Timeout = d.duration()
	c.EnqueuedAt = d.claimTime()
	c.ExpiresAt = d.claimTime()
	c.Ref = d.ref()
}
