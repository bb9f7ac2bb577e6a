package replicated

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// Answers and errors cross the forwarding wire unchanged: nil and empty
// slices stay apart, times keep their instant, and a *lease.Error keeps
// every field.
func TestWireRoundTrip(t *testing.T) {
	at := time.Unix(1_700_000_000, 123).UTC()
	l := lease.Lease{ID: 7, Holder: "h", Purpose: lease.Operation, TTL: time.Second, GrantedAt: at, RenewedAt: at, ExpiresAt: at.Add(time.Second), Revision: 9, Keys: []string{"a", "b"}}
	for _, a := range []answer{
		{},
		{lease: l, ok: true},
		{lease: lease.Lease{ID: 1, Keys: []string{}}},
		{value: []byte{}, id: 3, ok: true},
		{value: []byte("v"), id: 3, ok: true},
		{leases: []lease.Lease{}},
		{leases: []lease.Lease{l, l}},
		{kvs: []lease.KeyValue{{Key: "k", Value: nil, LeaseID: 1}, {Key: "j", Value: []byte{}}}},
	} {
		d := decoder{buf: appendAnswer(nil, &a)}
		require.Equal(t, respOK, d.byte())
		got := decodeAnswer(&d)
		require.NoError(t, d.err)
		require.Empty(t, d.buf)
		require.Equal(t, a, got)
	}

	le := &lease.Error{Code: lease.CodePurposeMismatch, Op: "use", LeaseID: 4, Field: "f", Expected: 2, Actual: 1, Key: "k", Detail: "d"}
	for _, tt := range []struct {
		err  error
		want func(error) bool
	}{
		{le, func(e error) bool { var got *lease.Error; return errors.As(e, &got) && *got == *le }},
		{&NotLeaderError{Op: "grant"}, func(e error) bool { return errors.Is(e, errRemoteNotLeader) }},
		{uncertain("grant"), func(e error) bool {
			return errors.Is(e, raft.ErrLeadershipLost) && errors.Is(e, ErrOutcomeUnknown)
		}},
		{outcomeUnknown("grant", context.DeadlineExceeded), func(e error) bool {
			var got *lease.Error
			return errors.Is(e, ErrOutcomeUnknown) && errors.As(e, &got) && got.Code == CodeOutcomeUnknown
		}},
		{&claim.NotFoundError{Op: "cancel", Queue: "q", Item: 7}, func(e error) bool {
			var got *claim.NotFoundError
			return errors.As(e, &got) && *got == claim.NotFoundError{Op: "cancel", Queue: "q", Item: 7}
		}},
		{closedError("grant"), func(e error) bool { return errors.Is(e, errRemoteClosed) }},
		{errors.New("disk on fire"), func(e error) bool { return e != nil && !errors.Is(e, lease.ErrClosed) }},
	} {
		d := decoder{buf: appendError(nil, tt.err)}
		got := decodeError(&d, d.byte(), "grant")
		require.NoError(t, d.err)
		require.True(t, tt.want(got), "%v became %v", tt.err, got)
	}
}

// A malformed request is answered with an error, never served.
func TestServeFrameRefusesGarbage(t *testing.T) {
	n := &Node{}
	for _, frame := range [][]byte{nil, {reqWrite}, {reqRead, 0, 99}, {'X', 0}, {reqMember, 0}} {
		d := decoder{buf: n.serveFrame(frame)}
		require.NotEqual(t, respOK, d.byte(), "%q", frame)
	}
}
