package lease_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// state is everything a caller can see of a service at one instant.
type state struct {
	Revision int64
	Live     []lease.Lease
	Keys     []lease.KeyValue
	Codes    []lease.Code // Info's answer for every ID up to one past the last
}

func stateOf(t testing.TB, s *lease.Service, lastID lease.ID) state {
	t.Helper()
	st := state{Revision: s.Revision(), Live: mustList(t, s), Keys: mustScan(t, s, "", 0)}
	for id := lease.ID(1); id <= lastID+1; id++ {
		_, err := s.Info(ctx, id)
		st.Codes = append(st.Codes, lease.CodeOf(err))
	}
	return st
}

// roundTrip writes sn and reads it back.
func roundTrip(t testing.TB, sn *lease.Snapshot) (*lease.Snapshot, []byte) {
	t.Helper()
	var buf bytes.Buffer
	n, err := sn.WriteTo(&buf)
	require.NoError(t, err)
	require.Equal(t, int64(buf.Len()), n)
	data := bytes.Clone(buf.Bytes())
	back, err := lease.ReadSnapshot(&buf)
	require.NoError(t, err)
	return back, data
}

// restoreAt restores sn on a fresh fake clock reading at.
func restoreAt(t testing.TB, sn *lease.Snapshot, at time.Time, opts ...lease.Option) (*lease.Service, *leasetest.FakeClock) {
	t.Helper()
	clk := leasetest.NewFakeClock(at)
	s, err := lease.Restore(sn, append([]lease.Option{lease.WithClock(clk)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, clk
}

// busyService builds a service with live, expired and revoked leases, keys
// attached and detached, a renewed lease and values both nil and empty.
func busyService(t *testing.T) (*lease.Service, *leasetest.FakeClock, lease.ID) {
	s, clk := newService(t, lease.WithEndedCapacity(4))
	short := grant(t, s, lease.Operation, time.Second)
	require.NoError(t, s.Put(ctx, "short/a", []byte("x"), short.ID))
	clk.Advance(2 * time.Second) // short expired
	revoked := grant(t, s, lease.StateWrite, time.Minute)
	_, err := s.Revoke(ctx, revoked.ID)
	require.NoError(t, err)
	long, err := s.GrantWithKey(ctx, "alice", lease.MigrationHandoff, time.Hour, "lock/a", []byte("v"))
	require.NoError(t, err)
	require.NoError(t, s.Put(ctx, "lock/b", []byte{}, long.ID))
	require.NoError(t, s.Put(ctx, "free", nil, 0))
	renewed := grant(t, s, lease.Operation, 10*time.Second)
	clk.Advance(3 * time.Second)
	_, err = s.RenewTTL(ctx, renewed.ID, 20*time.Second)
	require.NoError(t, err)
	p, err := lease.NewPurpose("snapshot_test_purpose")
	require.NoError(t, err)
	last := grant(t, s, p, 5*time.Second)
	return s, clk, last.ID
}

func TestSnapshotRoundTripIsExact(t *testing.T) {
	s, clk, lastID := busyService(t)
	sn, err := s.Snapshot()
	require.NoError(t, err)
	assert.Equal(t, clk.Now().UnixNano(), sn.At().UnixNano())
	assert.Equal(t, 3, sn.Len())
	back, data := roundTrip(t, sn)

	r, _ := restoreAt(t, back, clk.Now(), lease.WithEndedCapacity(4))
	want := stateOf(t, s, lastID)
	require.Equal(t, want, stateOf(t, r, lastID))
	v, _, ok := mustGet(t, r, "free")
	require.True(t, ok)
	assert.Nil(t, v, "a nil value stays nil")
	v, _, _ = mustGet(t, r, "lock/b")
	assert.Equal(t, []byte{}, v, "an empty value stays empty")

	again, err := r.Snapshot()
	require.NoError(t, err)
	_, data2 := roundTrip(t, again)
	assert.Equal(t, data, data2, "the restored service snapshots to the same bytes")
}

func TestRestoredServiceGoesOnAsTheOriginal(t *testing.T) {
	s, clk, lastID := busyService(t)
	sn, err := s.Snapshot()
	require.NoError(t, err)
	r, rclk := restoreAt(t, sn, clk.Now(), lease.WithEndedCapacity(4))

	// The same calls at the same instants give the same answers: IDs and
	// revisions continue, and expiries fall at the same times.
	for _, svc := range []*lease.Service{s, r} {
		l, err := svc.Grant(ctx, "bob", lease.Operation, 7*time.Second)
		require.NoError(t, err)
		assert.Equal(t, lastID+1, l.ID)
	}
	for _, step := range []time.Duration{time.Second, 4 * time.Second, 10 * time.Second, time.Hour} {
		clk.Advance(step)
		rclk.Advance(step)
		require.Equal(t, stateOf(t, s, lastID+1), stateOf(t, r, lastID+1), "after %v", step)
	}
}

func TestRestoreCountsTimeSpentDown(t *testing.T) {
	s, clk := newService(t)
	soon := grant(t, s, lease.Operation, 3*time.Second)
	require.NoError(t, s.Put(ctx, "soon", []byte("x"), soon.ID))
	later := grant(t, s, lease.Operation, time.Minute)
	sn, err := s.Snapshot()
	require.NoError(t, err)

	var expired []lease.ID
	r, _ := restoreAt(t, sn, clk.Now().Add(5*time.Second))
	onExpired(r, func(l lease.Lease) {
		expired = append(expired, l.ID)
	})
	_, err = r.Renew(ctx, soon.ID)
	requireCode(t, err, lease.CodeExpired, lease.ErrExpired)
	_, _, ok := mustGet(t, r, "soon")
	assert.False(t, ok, "the keys of a lease that expired while down are gone")
	assert.Equal(t, []lease.ID{soon.ID}, expired, "its expiry is reported, not forgotten")

	l, err := r.Info(ctx, later.ID)
	require.NoError(t, err)
	assert.Equal(t, later.ExpiresAt, l.ExpiresAt, "time down counts against the lease")
}

func TestRestoreOnAClockBehindKeepsWhatWasLeft(t *testing.T) {
	s, clk := newService(t)
	l := grant(t, s, lease.Operation, time.Minute)
	clk.Advance(20 * time.Second)
	sn, err := s.Snapshot()
	require.NoError(t, err)

	back := clk.Now().Add(-time.Hour)
	r, rclk := restoreAt(t, sn, back)
	got, err := r.Info(ctx, l.ID)
	require.NoError(t, err)
	assert.Equal(t, back.Add(40*time.Second), got.ExpiresAt, "never more than it had left")
	assert.Equal(t, time.Minute, got.TTL)
	rclk.Advance(40 * time.Second)
	_, err = r.Info(ctx, l.ID)
	requireCode(t, err, lease.CodeExpired, lease.ErrExpired)
}

func TestRestoreKeepsTheNewestEndedLeases(t *testing.T) {
	s, clk := newService(t)
	var ids []lease.ID
	for range 5 {
		l := grant(t, s, lease.Operation, time.Minute)
		_, err := s.Revoke(ctx, l.ID)
		require.NoError(t, err)
		ids = append(ids, l.ID)
	}
	sn, err := s.Snapshot()
	require.NoError(t, err)
	r, _ := restoreAt(t, sn, clk.Now(), lease.WithEndedCapacity(2))
	for i, id := range ids {
		_, err := r.Renew(ctx, id)
		if i >= 3 {
			requireCode(t, err, lease.CodeAlreadyRevoked, lease.ErrAlreadyRevoked)
		} else {
			requireCode(t, err, lease.CodeExpired, lease.ErrExpired) // ended, no longer remembered
		}
	}
	// The record goes on evicting the oldest.
	l := grant(t, r, lease.Operation, time.Minute)
	_, err = r.Revoke(ctx, l.ID)
	require.NoError(t, err)
	_, err = r.Renew(ctx, ids[3])
	requireCode(t, err, lease.CodeExpired, lease.ErrExpired)
}

func TestRestoreOfSparseIDs(t *testing.T) {
	// Survivors scattered over many slabs of the lease table: restoring
	// them moves entries while the heap refers to them.
	s, clk := newService(t)
	var kept []lease.ID
	for i := range 5000 {
		l := grant(t, s, lease.Operation, time.Duration(1+i%50)*time.Minute)
		if i%97 == 0 {
			kept = append(kept, l.ID)
			continue
		}
		_, err := s.Revoke(ctx, l.ID)
		require.NoError(t, err)
	}
	sn, err := s.Snapshot()
	require.NoError(t, err)
	back, _ := roundTrip(t, sn) // reading checks the leases are in ID order
	r, rclk := restoreAt(t, back, clk.Now())
	require.Equal(t, stateOf(t, s, lease.ID(5000)), stateOf(t, r, lease.ID(5000)))
	for _, id := range kept {
		_, err := r.Info(ctx, id)
		require.NoError(t, err)
	}
	rclk.Advance(time.Hour)
	assert.Zero(t, r.ActiveCount(), "every restored lease expires")
}

func TestSnapshotAfterClose(t *testing.T) {
	s, _ := newService(t)
	require.NoError(t, s.Close())
	_, err := s.Snapshot()
	requireCode(t, err, lease.CodeClosed, lease.ErrClosed)
}

func TestRestoreNil(t *testing.T) {
	_, err := lease.Restore(nil)
	requireField(t, err, "snapshot")
}

func requireField(t *testing.T, err error, field string) {
	t.Helper()
	requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	var le *lease.Error
	require.True(t, errors.As(err, &le))
	assert.Equal(t, field, le.Field)
}

// resum replaces data's checksum with the right one for its body.
func resum(data []byte) []byte {
	out := bytes.Clone(data)
	body := out[:len(out)-4]
	binary.LittleEndian.PutUint32(out[len(out)-4:], crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	return out
}

func TestReadSnapshotRefusesBadData(t *testing.T) {
	s, _, _ := busyService(t)
	sn, err := s.Snapshot()
	require.NoError(t, err)
	_, data := roundTrip(t, sn)

	flipped := bytes.Clone(data)
	flipped[len(flipped)/2] ^= 1
	version := bytes.Clone(data)
	version[8] = 2 // the version varint follows the 8 magic bytes
	cases := map[string][]byte{
		"empty":          nil,
		"not a snapshot": []byte("hello, world"),
		"truncated":      data[:len(data)-10],
		"flipped bit":    flipped,
		"newer version":  resum(version),
		"trailing bytes": resum(append(bytes.Clone(data[:len(data)-4]), 0, 0, 0, 0, 0)),
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := lease.ReadSnapshot(bytes.NewReader(bad))
			requireField(t, err, "snapshot")
		})
	}
}

type failingReader struct{}

var errDisk = errors.New("disk on fire")

func (failingReader) Read([]byte) (int, error) { return 0, errDisk }

type failingWriter struct{ after int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.after < len(p) {
		n := w.after
		w.after = 0
		return n, errDisk
	}
	w.after -= len(p)
	return len(p), nil
}

func TestSnapshotIOErrorsPassThrough(t *testing.T) {
	_, err := lease.ReadSnapshot(failingReader{})
	require.ErrorIs(t, err, errDisk)

	s, _, _ := busyService(t)
	sn, err := s.Snapshot()
	require.NoError(t, err)
	for _, after := range []int{0, 10} {
		n, err := sn.WriteTo(&failingWriter{after: after})
		require.ErrorIs(t, err, errDisk)
		assert.Equal(t, int64(after), n)
	}
}

func TestSnapshotDoesNotAliasTheService(t *testing.T) {
	s, clk := newService(t)
	l := grant(t, s, lease.Operation, time.Minute)
	value := []byte("before")
	require.NoError(t, s.Put(ctx, "k", value, l.ID))
	sn, err := s.Snapshot()
	require.NoError(t, err)
	value[0] = 'X' // the caller's slice was copied by Put
	require.NoError(t, s.Put(ctx, "k", []byte("after"), l.ID))
	r, _ := restoreAt(t, sn, clk.Now())
	got, _, _ := mustGet(t, r, "k")
	assert.Equal(t, []byte("before"), got)
	got[0] = 'Y'
	again, _, _ := mustGet(t, r, "k")
	assert.Equal(t, []byte("before"), again)
}
