package lease_test

import (
	"bytes"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// FuzzSnapshot drives a service through the operations in data, then
// checks that a snapshot of it restores exactly (the same answers, the same
// bytes when snapshotted again) and that the restored service goes on as
// the original does.
func FuzzSnapshot(f *testing.F) {
	f.Add([]byte{2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
	f.Add([]byte{0, 0, 9, 0, 9, 1, 3, 6, 3, 2, 0, 4, 8, 5, 7, 5, 200})
	f.Add(bytes.Repeat([]byte{0, 7, 3, 1, 2, 250, 4, 1, 6, 2}, 30))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		capacity := lease.WithEndedCapacity(int(data[0] % 8))
		clk := leasetest.NewFakeClock(t0)
		s := lease.Must(lease.New(lease.WithClock(clk), capacity))
		defer func() { _ = s.Close() }()
		var lastID lease.ID
		next := func() byte {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return b
		}
		pickID := func() lease.ID { return lease.ID(next()) % (lastID + 2) }
		value := func() []byte {
			switch b := next(); b % 3 {
			case 0:
				return nil
			case 1:
				return []byte{}
			default:
				return []byte{b}
			}
		}
		for data = data[1:]; len(data) > 0; {
			switch next() % 8 {
			case 0, 1:
				ttl := time.Duration(1+next()%16) * time.Second
				holder := "h" + strconv.Itoa(int(next()%3))
				purpose := lease.Purpose(1 + next()%3)
				var l lease.Lease
				var err error
				if k := next(); k%2 == 0 {
					l, err = s.GrantWithKey(ctx, holder, purpose, ttl, "k"+strconv.Itoa(int(k%8)), value())
				} else {
					l, err = s.Grant(ctx, holder, purpose, ttl)
				}
				if err == nil {
					lastID = l.ID
				}
			case 2:
				_, _ = s.Renew(ctx, pickID())
			case 3:
				_, _ = s.Revoke(ctx, pickID())
			case 4:
				_ = s.Put(ctx, "k"+strconv.Itoa(int(next()%8)), value(), pickID())
			case 5:
				_, _ = s.Delete(ctx, "k"+strconv.Itoa(int(next()%8)))
			default:
				clk.Advance(time.Duration(next()) * 50 * time.Millisecond)
			}
		}
		sn, err := s.Snapshot()
		require.NoError(t, err)
		back, data1 := roundTrip(t, sn)
		rclk := leasetest.NewFakeClock(clk.Now())
		r, err := lease.Restore(back, lease.WithClock(rclk), capacity)
		require.NoError(t, err)
		defer func() { _ = r.Close() }()
		require.Equal(t, stateOf(t, s, lastID), stateOf(t, r, lastID))
		again, err := r.Snapshot()
		require.NoError(t, err)
		_, data2 := roundTrip(t, again)
		require.Equal(t, data1, data2)

		for _, step := range []time.Duration{0, 999 * time.Millisecond, time.Second, 5 * time.Second, time.Minute} {
			clk.Advance(step)
			rclk.Advance(step)
			a, errA := s.Grant(ctx, "later", lease.Operation, 3*time.Second)
			b, errB := r.Grant(ctx, "later", lease.Operation, 3*time.Second)
			require.Equal(t, errA, errB)
			require.Equal(t, a.ID, b.ID)
			lastID = a.ID
			require.Equal(t, stateOf(t, s, lastID), stateOf(t, r, lastID), "after %v", step)
		}
	})
}

// FuzzReadSnapshot feeds ReadSnapshot arbitrary bytes: it never panics,
// refuses what it cannot read with a typed error naming the snapshot, and
// whatever it accepts restores and writes back in the same form.
func FuzzReadSnapshot(f *testing.F) {
	clk := leasetest.NewFakeClock(t0)
	s := lease.Must(lease.New(lease.WithClock(clk), lease.WithEndedCapacity(3)))
	for i := range 6 {
		l, err := s.GrantWithKey(ctx, "h", lease.Operation, time.Duration(i+1)*time.Second, "k"+strconv.Itoa(i), []byte{byte(i)})
		require.NoError(f, err)
		if i%2 == 0 {
			_, err = s.Revoke(ctx, l.ID)
			require.NoError(f, err)
		}
	}
	sn, err := s.Snapshot()
	require.NoError(f, err)
	require.NoError(f, s.Close())
	var buf bytes.Buffer
	_, err = sn.WriteTo(&buf)
	require.NoError(f, err)
	f.Add(buf.Bytes())
	f.Add(resum(buf.Bytes()[:30]))
	f.Add([]byte("LEASESNP\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sn, err := lease.ReadSnapshot(bytes.NewReader(data))
		if err != nil {
			var le *lease.Error
			require.True(t, errors.As(err, &le), "%v", err)
			require.Equal(t, "snapshot", le.Field)
			return
		}
		r, err := lease.Restore(sn, lease.WithClock(leasetest.NewFakeClock(sn.At())))
		require.NoError(t, err)
		defer func() { _ = r.Close() }()
		var out bytes.Buffer
		_, err = sn.WriteTo(&out)
		require.NoError(t, err)
		back, err := lease.ReadSnapshot(bytes.NewReader(out.Bytes()))
		require.NoError(t, err)
		var out2 bytes.Buffer
		_, err = back.WriteTo(&out2)
		require.NoError(t, err)
		require.Equal(t, out.Bytes(), out2.Bytes())
	})
}
