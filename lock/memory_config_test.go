package lock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
)

// TestNewMemoryRefusesBadConfiguration: a nil service and every option
// given a value it can never take get an error naming it and no Memory,
// without a panic, and leave no goroutine behind.
func TestNewMemoryRefusesBadConfiguration(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	svc := lease.Must(lease.New())
	defer func() { require.NoError(t, svc.Close()) }()

	cases := []struct {
		field string
		svc   *lease.Service
		opt   func() lock.MemoryOption
	}{
		{"svc", nil, nil},
		{"WithKeyPrefix", svc, func() lock.MemoryOption { return lock.WithKeyPrefix("") }},
		{"WithPurpose", svc, func() lock.MemoryOption { return lock.WithPurpose(0) }},
		{"WithPurpose", svc, func() lock.MemoryOption { return lock.WithPurpose(60000) }},
		{"WithLockDelay", svc, func() lock.MemoryOption { return lock.WithLockDelay(-time.Nanosecond) }},
		{"MemoryOption", svc, func() lock.MemoryOption { return nil }},
	}
	for _, tc := range cases {
		t.Run(tc.field, func(t *testing.T) {
			var opts []lock.MemoryOption
			if tc.opt != nil {
				var opt lock.MemoryOption
				require.NotPanics(t, func() { opt = tc.opt() })
				opts = append(opts, lock.WithLockDelay(time.Second), opt)
			}
			m, err := lock.NewMemory(tc.svc, opts...)
			assert.Nil(t, m)
			var le *lease.Error
			require.ErrorAs(t, err, &le)
			assert.Equal(t, lease.CodeInvalidArgument, le.Code)
			assert.Equal(t, "lock", le.Package)
			assert.Equal(t, "NewMemory", le.Op)
			assert.Equal(t, tc.field, le.Field)
			assert.ErrorIs(t, err, lease.ErrInvalidArgument)
		})
	}
	_, err := lock.NewMemory(svc, lock.WithLockDelay(-1), lock.WithKeyPrefix(""))
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "WithLockDelay", le.Field, "the first bad option is named")
}
