package election

import (
	"errors"

	"github.com/leasehold/lease/lock"
)

// ErrNoLeader is returned by Election.Leader when nobody leads.
var ErrNoLeader = errors.New("election: no leader")

// ErrLeadershipLost is the cause (see context.Cause) with which a
// Leadership's context is cancelled when the leadership is lost: a renewal
// showed the lock gone, or no renewal confirmed it before its safety
// deadline. It is lock.ErrLockLost, since a leadership is a held lock.
var ErrLeadershipLost = lock.ErrLockLost

// ErrResigned is the cause with which a Leadership's context is cancelled
// by Resign.
var ErrResigned = errors.New("election: resigned")
