package claim_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
)

// requireRefused checks that err is a claim error refusing field of op.
func requireRefused(t *testing.T, err error, op, field string) {
	t.Helper()
	var le *lease.Error
	require.ErrorAs(t, err, &le, field)
	assert.Equal(t, lease.CodeInvalidArgument, le.Code, field)
	assert.Equal(t, "claim", le.Package)
	assert.Equal(t, op, le.Op)
	assert.Equal(t, field, le.Field)
	assert.ErrorIs(t, err, lease.ErrInvalidArgument)
}

// TestNewRefusesBadConfiguration: a nil store and every option given a
// value it can never take get an error naming it and no Broker, without a
// panic; the store, never owned, is left open; no goroutine is left.
func TestNewRefusesBadConfiguration(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	svc := lease.Must(lease.New(lease.WithClock(leasetest.NewFakeClock(t0))))
	defer func() { require.NoError(t, svc.Close()) }()
	store := lease.Must(claim.NewMemory(svc))
	defer func() { require.NoError(t, store.Close()) }()

	b, err := claim.New(nil)
	assert.Nil(t, b)
	requireRefused(t, err, "New", "store")

	cases := []struct {
		option string
		opt    func() claim.Option
	}{
		{"WithMaxAttempts", func() claim.Option { return claim.WithMaxAttempts(0) }},
		{"WithMaxAttempts", func() claim.Option { return claim.WithMaxAttempts(-3) }},
		{"WithJitter", func() claim.Option { return claim.WithJitter(nil) }},
		{"WithPanicHandler", func() claim.Option { return lease.WithPanicHandler(nil) }},
		{"WithClock", func() claim.Option { return lease.WithClock(nil) }},
		{"WithObserver", func() claim.Option { return claim.WithObserver(nil) }},
		{"WithErrorHook", func() claim.Option { return claim.WithErrorHook(nil) }},
		{"Option", func() claim.Option { return nil }},
	}
	for _, tc := range cases {
		t.Run(tc.option, func(t *testing.T) {
			var opt claim.Option
			require.NotPanics(t, func() { opt = tc.opt() })
			b, err := claim.New(store, claim.WithMaxAttempts(2), opt)
			assert.Nil(t, b)
			requireRefused(t, err, "New", tc.option)
		})
	}

	// The store was not closed by the refusals.
	_, err = store.Enqueue(context.Background(), []claim.NewItem{{Queue: q, Payload: []byte("x"), MaxAttempts: 1}})
	require.NoError(t, err)
}

// TestNewReportsTheFirstBadOption: New names the first bad option.
func TestNewReportsTheFirstBadOption(t *testing.T) {
	svc := lease.Must(lease.New(lease.WithClock(leasetest.NewFakeClock(t0))))
	defer func() { require.NoError(t, svc.Close()) }()
	store := lease.Must(claim.NewMemory(svc))
	defer func() { require.NoError(t, store.Close()) }()
	_, err := claim.New(store, claim.WithJitter(nil), claim.WithMaxAttempts(0))
	requireRefused(t, err, "New", "WithJitter")
	jitter := func(d time.Duration) time.Duration { return d }
	_, err = claim.New(store, claim.WithJitter(jitter), claim.WithMaxAttempts(0))
	requireRefused(t, err, "New", "WithMaxAttempts")
}

// TestNewMemoryRefusesANilService: no Memory, no goroutine watching.
func TestNewMemoryRefusesANilService(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	m, err := claim.NewMemory(nil)
	assert.Nil(t, m)
	requireRefused(t, err, "NewMemory", "svc")
}
