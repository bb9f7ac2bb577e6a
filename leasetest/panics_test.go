package leasetest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

func TestPanicRecorder(t *testing.T) {
	var r leasetest.PanicRecorder
	assert.Empty(t, r.Panics())
	s := lease.Must(lease.New(lease.WithPanicHandler(r.Handle)))
	defer s.Close()
	s.OnEnd(func(lease.Lease, lease.EndReason) { panic("boom") })
	l, err := s.Grant(t.Context(), "h", lease.Operation, 1<<40)
	assert.NoError(t, err)
	_, err = s.Revoke(t.Context(), l.ID)
	assert.NoError(t, err)
	assert.Equal(t, []string{"end subscriber"}, r.Callbacks())
	got := r.Panics()
	got[0] = nil
	assert.NotNil(t, r.Panics()[0], "Panics returns a copy")
}
