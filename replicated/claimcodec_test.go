package replicated

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// fill sets every field of the value v points to, recursively, to a value
// that is not zero and differs from field to field (seq counts them), so
// that a round trip that drops a field, or swaps two, is seen.
func fill(v reflect.Value, seq *int) {
	*seq++
	n := *seq
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Unix(int64(1_700_000_000+n), int64(n)).UTC()))
			return
		}
		for i := range v.NumField() {
			fill(v.Field(i), seq)
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), seq)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), seq)
		}
	case reflect.String:
		v.SetString("s" + string(rune('a'+n%26)) + string(rune('a'+n/26%26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(n) * 1_000_003)
	case reflect.Uint8:
		v.SetUint(uint64(n%5 + 1))
	case reflect.Uint64:
		v.SetUint(uint64(n) << 40)
	default:
		panic("fill: no value for " + v.Type().String())
	}
}

// Every field of a call and of a reply, and of the claim package's values
// in them, survives the encoding: a field added to one of them and not to
// the encoding fails here.
func TestClaimCodecCoversEveryField(t *testing.T) {
	seq := 0
	var c claimCall
	fill(reflect.ValueOf(&c).Elem(), &seq)
	for _, op := range claimOpCodes[1:] {
		c.Op = op
		got, err := decodeClaimCall(encodeClaimCall(&c))
		require.NoError(t, err)
		require.Equal(t, &c, got, "op %s", op)
	}
	var rep claimReply
	fill(reflect.ValueOf(&rep).Elem(), &seq)
	got, err := decodeReply(encodeReply(&rep))
	require.NoError(t, err)
	require.Equal(t, &rep, got)
}

// Nil and empty slices stay apart, and absent fields stay absent.
func TestClaimCodecKeepsNilAndEmptyApart(t *testing.T) {
	calls := []claimCall{
		{Op: callEnqueue, Items: []claim.NewItem{}},
		{Op: callEnqueue, Items: []claim.NewItem{{Queue: "q", Payload: []byte{}, Tags: []string{}, Metadata: []byte{}, KeyStates: []claim.State{}}, {Queue: "q"}}},
		{Op: callSettle, Settlement: &claim.Settlement{}},
		{Op: callCounts},
		{Op: callList, Query: &claim.Query{}},
	}
	for _, c := range calls {
		got, err := decodeClaimCall(encodeClaimCall(&c))
		require.NoError(t, err)
		require.Equal(t, &c, got)
	}
	reps := []claimReply{
		{},
		{Items: []claim.Item{}, Claims: []claim.Claim{}, Queues: []claim.QueueInfo{}},
		{Items: []claim.Item{{History: []claim.Failure{}}}, Item: &claim.Item{}, Claims: []claim.Claim{{Tags: []string{}, Payload: []byte{}}}},
		{Time: time.Unix(-1, 999_999_999).UTC(), Queues: []claim.QueueInfo{{Name: "q", PausedAt: time.Date(9999, 1, 1, 0, 0, 0, 1, time.UTC)}}},
	}
	for _, r := range reps {
		got, err := decodeReply(encodeReply(&r))
		require.NoError(t, err)
		require.Equal(t, &r, got)
	}
}

// A settlement, the call a worker makes once per item, is a few bytes.
func TestClaimCodecSettlementIsSmall(t *testing.T) {
	c := claimCall{Op: callSettle, Settlement: &claim.Settlement{Ref: claim.Ref{Item: 1 << 20, Token: 1 << 20}, How: claim.SettleComplete}}
	assert.LessOrEqual(t, len(encodeClaimCall(&c)), 14)
}

// checkCorrupt checks that err is the error of a claim store call or
// reply that does not decode.
func checkCorrupt(t *testing.T, err error) {
	t.Helper()
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, lease.CodeStorage, le.Code)
	assert.Equal(t, "replicated", le.Package)
	assert.ErrorIs(t, err, errCorrupt)
}

// Every cut of an encoded call or reply, and trailing bytes, unknown
// formats, ops and fields, are refused with a *lease.Error.
func TestClaimCodecRefusesGarbage(t *testing.T) {
	seq := 0
	var c claimCall
	fill(reflect.ValueOf(&c).Elem(), &seq)
	c.Op = callEnqueue
	call := encodeClaimCall(&c)
	for i := range call {
		_, err := decodeClaimCall(call[:i])
		checkCorrupt(t, err)
	}
	_, err := decodeClaimCall(append(bytes.Clone(call), 0))
	checkCorrupt(t, err)
	var rep claimReply
	fill(reflect.ValueOf(&rep).Elem(), &seq)
	reply := encodeReply(&rep)
	for i := range reply {
		_, err := decodeReply(reply[:i])
		checkCorrupt(t, err)
	}
	_, err = decodeReply(append(bytes.Clone(reply), 0))
	checkCorrupt(t, err)

	for _, bad := range [][]byte{
		{2, 4, 0},        // a later format
		{claimFormat, 0}, // no op
		{claimFormat, 200, 0},
		{claimFormat, 4, 0x80, 0x10}, // an unknown field
		{claimFormat, 1, 1, 0xff, 0xff, 0xff, 0xff, 0x0f}, // more items than bytes
		[]byte(`{"Op":`),
	} {
		_, err := decodeClaimCall(bad)
		checkCorrupt(t, err)
	}
	_, err = decodeClaimCall([]byte{2, 4, 0})
	assert.ErrorContains(t, err, "unknown format 0x02")
	_, err = peekClaimOp([]byte{2})
	checkCorrupt(t, err)
	_, err = decodeReply([]byte{claimFormat, 0x80, 0x01})
	checkCorrupt(t, err)
	_, err = decodeReply([]byte{claimFormat, replyHasQueues, 0x7f})
	checkCorrupt(t, err)
}

// FuzzClaimCodec decodes garbage as a call and as a reply: neither may
// panic, an error is a *lease.Error, and what decodes encodes back to the
// same value. The seeds run as a plain test.
func FuzzClaimCodec(f *testing.F) {
	seq := 0
	var c claimCall
	fill(reflect.ValueOf(&c).Elem(), &seq)
	for _, op := range claimOpCodes[1:] {
		c.Op = op
		f.Add(encodeClaimCall(&c))
	}
	var rep claimReply
	fill(reflect.ValueOf(&rep).Elem(), &seq)
	f.Add(encodeReply(&rep))
	f.Add(encodeReply(&claimReply{}))
	f.Add(encodeClaimCall(&claimCall{Op: callSettle, Settlement: &claim.Settlement{Ref: claim.Ref{Item: 3, Token: 9}, How: claim.SettleComplete}}))
	for _, js := range json010 {
		f.Add([]byte(js))
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		if c, err := decodeClaimCall(data); err != nil {
			var le *lease.Error
			require.True(t, errors.As(err, &le), "%v", err)
		} else if len(data) > 0 && data[0] == claimFormat {
			again, err := decodeClaimCall(encodeClaimCall(c))
			require.NoError(t, err)
			require.Equal(t, c, again)
		}
		if _, err := peekClaimOp(data); err != nil {
			var le *lease.Error
			require.True(t, errors.As(err, &le), "%v", err)
		}
		if r, err := decodeReply(data); err != nil {
			var le *lease.Error
			require.True(t, errors.As(err, &le), "%v", err)
		} else {
			again, err := decodeReply(encodeReply(r))
			require.NoError(t, err)
			require.Equal(t, r, again)
		}
	})
}

// json010 are calls as release 0.1.0 wrote them into its log: retention,
// an enqueue of two items, a claim of both, their settlements.
var json010 = []string{
	`{"Op":"set_retention","Retention":{"Completed":86400000000000,"Cancelled":86400000000000,"Dead":604800000000000}}`,
	`{"Op":"enqueue","Items":[{"Queue":"q","Payload":"aGk=","Kind":"","Tags":["t"],"Metadata":null,"Key":"","KeyStates":null,"Delay":0,"MaxAttempts":3,"Priority":0,"Timeout":0},{"Queue":"q","Payload":null,"Kind":"","Tags":null,"Metadata":null,"Key":"","KeyStates":null,"Delay":0,"MaxAttempts":3,"Priority":0,"Timeout":0}]}`,
	`{"Op":"claim","Request":{"Queue":"q","Owner":"w","Limit":2,"Lease":60000000000}}`,
	`{"Op":"settle","Settlement":{"Ref":{"Item":1,"Token":1},"How":1,"After":0,"Reason":""}}`,
	`{"Op":"settle","Settlement":{"Ref":{"Item":2,"Token":2},"How":2,"After":1000000000,"Reason":"boom"}}`,
}

// A log written by release 0.1.0, whose claim store calls are JSON,
// applies as it did: the same queues as the same calls in the binary
// format make.
func TestFSMApplies010ClaimCalls(t *testing.T) {
	nop := func(lease.Lease, lease.EndReason) {}
	old, cur := newFSM(nil, nop, func() {}), newFSM(nil, nop, func() {})
	defer old.close()
	defer cur.close()
	t0 := time.Unix(1_000, 0)
	for i, js := range json010 {
		at := t0.Add(time.Duration(i) * time.Second)
		r := applyAt(old, uint64(i+1), at, command{op: opClaim, value: []byte(js)})
		require.Len(t, r, 1)
		require.NoError(t, r[0].err, "entry %d", i)
		c, err := decodeClaimCall([]byte(js))
		require.NoError(t, err)
		r2 := applyAt(cur, uint64(i+1), at, claimCmd(*c))
		require.NoError(t, r2[0].err)
		require.Equal(t, r2[0].claim, r[0].claim, "entry %d", i)
	}
	counts, err := old.state.Load().claims.mem.Counts(t.Context(), "q")
	require.NoError(t, err)
	assert.Equal(t, claim.Counts{Completed: 1, Delayed: 1}, counts)
	it, err := old.state.Load().claims.mem.Lookup(t.Context(), 1)
	require.NoError(t, err)
	assert.Equal(t, []byte("hi"), it.Payload)
	assert.Equal(t, []string{"t"}, it.Tags)
	require.Equal(t, string(queueDoc(t, cur)), string(queueDoc(t, old)))

	// An unknown call in JSON is refused as it was.
	r := applyAt(old, 10, t0.Add(time.Minute), command{op: opClaim, value: []byte(`{"Op":"steal"}`)})
	require.ErrorIs(t, r[0].err, lease.ErrInvalidArgument)
}
