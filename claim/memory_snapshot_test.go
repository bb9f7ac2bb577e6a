package claim_test

import (
	"bytes"
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
)

// everything lists every item of every state of queue, and the queues.
func everything(t *testing.T, m *claim.Memory, queues ...string) ([]claim.Item, []claim.QueueInfo) {
	t.Helper()
	ctx := context.Background()
	var items []claim.Item
	for _, q := range queues {
		got, err := m.List(ctx, claim.Query{Queue: q, Limit: 1000})
		require.NoError(t, err)
		items = append(items, got...)
	}
	qs, err := m.Queues(ctx, claim.QueueQuery{Limit: 100})
	require.NoError(t, err)
	return items, qs
}

func TestMemorySnapshotRestoresEveryState(t *testing.T) {
	ctx := context.Background()
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := lease.Must(lease.New(lease.WithClock(clock)))
	defer func() { _ = svc.Close() }()
	m := lease.Must(claim.NewMemory(svc))
	defer func() { _ = m.Close() }()
	require.NoError(t, m.SetRetention(claim.Retention{Completed: time.Hour, Cancelled: time.Hour, Dead: time.Hour}))

	_, err := m.Enqueue(ctx, []claim.NewItem{
		{Queue: "a", Payload: []byte("done"), MaxAttempts: 3, Key: "k1"},
		{Queue: "a", Payload: []byte("dead"), MaxAttempts: 1, Tags: []string{"x"}},
		{Queue: "a", Payload: []byte("held"), MaxAttempts: 3, Metadata: []byte{}},
		{Queue: "a", Payload: nil, MaxAttempts: 3, Kind: "k", Priority: 2},
		{Queue: "a", Payload: []byte("cancel"), MaxAttempts: 3},
		{Queue: "b", Payload: []byte("later"), MaxAttempts: 3, Delay: time.Minute, Timeout: time.Second},
	})
	require.NoError(t, err)
	cs, err := m.Claim(ctx, claim.ClaimRequest{Queue: "a", Owner: "w", Limit: 3, Lease: time.Minute})
	require.NoError(t, err)
	require.Len(t, cs, 3)
	require.NoError(t, m.Settle(ctx, claim.Settlement{Ref: cs[0].Ref, How: claim.SettleComplete}))
	require.NoError(t, m.Settle(ctx, claim.Settlement{Ref: cs[1].Ref, How: claim.SettleDead, Reason: "bad"}))
	require.NoError(t, m.Cancel(ctx, "a", 5))
	require.NoError(t, m.Pause(ctx, "c"))
	clock.Advance(time.Second)

	var buf bytes.Buffer
	sn, err := svc.Snapshot()
	require.NoError(t, err)
	require.NoError(t, m.WriteSnapshot(&buf))
	wantItems, wantQueues := everything(t, m, "a", "b")

	svc2 := lease.Must(lease.Restore(sn, lease.WithClock(clock)))
	defer func() { _ = svc2.Close() }()
	var lost []claim.Ref
	m2, err := claim.RestoreMemory(svc2, &buf, func(r claim.Ref, _ error) { lost = append(lost, r) })
	require.NoError(t, err)
	defer func() { _ = m2.Close() }()
	gotItems, gotQueues := everything(t, m2, "a", "b")
	require.Equal(t, wantItems, gotItems)
	require.Equal(t, wantQueues, gotQueues)

	// The key is still held, the next item and token are past the old ones,
	// and the restored claim expires on the restored service with its Lost.
	dup, err := m2.Enqueue(ctx, []claim.NewItem{{Queue: "a", Key: "k1", MaxAttempts: 1}, {Queue: "a", MaxAttempts: 1}})
	require.NoError(t, err)
	require.True(t, dup[0].Duplicate)
	require.Equal(t, claim.ItemID(7), dup[1].ID)
	clock.Advance(time.Minute)
	require.Equal(t, []claim.Ref{cs[2].Ref}, lost)
	again, err := m2.Claim(ctx, claim.ClaimRequest{Queue: "a", Owner: "w", Limit: 1, Lease: time.Minute})
	require.NoError(t, err)
	require.Len(t, again, 1)
	require.Greater(t, again[0].Ref.Token, cs[2].Ref.Token)
}

func TestRestoreMemoryRefusesBadInput(t *testing.T) {
	svc := lease.Must(lease.New())
	defer func() { _ = svc.Close() }()
	_, err := claim.RestoreMemory(nil, bytes.NewReader(nil), nil)
	requireField(t, err, "svc")
	_, err = claim.RestoreMemory(svc, bytes.NewReader([]byte("{")), nil)
	requireField(t, err, "snapshot")
	_, err = claim.RestoreMemory(svc, bytes.NewReader([]byte(`{"Version":9}`)), nil)
	requireField(t, err, "snapshot")
	_, err = claim.RestoreMemory(svc, bytes.NewReader([]byte(`{"Version":1,"LastID":1,"Items":[{"ID":1,"Queue":"q","State":4,"Max":1}]}`)), nil)
	requireField(t, err, "snapshot") // a dead item in no queue's dead letters
}

func requireField(t *testing.T, err error, field string) {
	t.Helper()
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	require.Equal(t, lease.CodeInvalidArgument, le.Code)
	require.Equal(t, field, le.Field)
}

// TestMemorySnapshotCoversEveryItemField fails when the Memory's item
// record gains a field: the snapshot must save it too.
func TestMemorySnapshotCoversEveryItemField(t *testing.T) {
	require.Equal(t, []string{"ID", "Queue", "Kind", "Tags", "Metadata", "Key", "Payload", "State", "Attempts",
		"MaxAttempts", "Priority", "Timeout", "EnqueuedAt", "VisibleAt", "DeadAt", "FinishedAt", "History", "Duplicate"},
		fieldNames(reflect.TypeFor[claim.Item]()), "claim.Item changed: save the new field in the Memory's snapshot")
}

func fieldNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		out = append(out, t.Field(i).Name)
	}
	return out
}
