package lock_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/lock"
)

func TestFence(t *testing.T) {
	steps := []struct {
		name    string
		token   uint64
		wantErr bool
		highest uint64
	}{
		{"a", 5, false, 5},
		{"a", 5, false, 5}, // the same holder writes again
		{"a", 4, true, 5},
		{"b", 1, false, 1}, // names are independent
		{"a", 9, false, 9},
		{"a", 5, true, 9},
	}
	var f lock.Fence
	for i, s := range steps {
		err := f.Check(s.name, s.token)
		if !s.wantErr {
			require.NoError(t, err, "step %d", i)
		} else {
			require.ErrorIs(t, err, lock.ErrStaleToken, "step %d", i)
			var se *lock.StaleTokenError
			require.True(t, errors.As(err, &se))
			assert.Equal(t, lock.StaleTokenError{Name: s.name, Token: s.token, Highest: s.highest}, *se)
		}
		assert.Equal(t, s.highest, f.Highest(s.name), "step %d", i)
	}
	assert.Equal(t, `lock: stale fencing token 5 for "a" (seen 9) [LS_STALE_TOKEN]`, f.Check("a", 5).Error())
}
