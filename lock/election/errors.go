package election

import (
	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
)

// The codes of this package's errors, beside those of packages lease and
// lock. Codes never change meaning.
const (
	// CodeNoLeader: nobody leads.
	CodeNoLeader lease.Code = "LS_NO_LEADER"
	// CodeResigned: the leadership was given up by Resign.
	CodeResigned lease.Code = "LS_RESIGNED"
)

// ErrNoLeader is returned by Election.Leader when nobody leads. It is a
// *lease.Error with CodeNoLeader; treat it as read-only.
var ErrNoLeader error = &lease.Error{Package: "election", Code: CodeNoLeader, Detail: "no leader"}

// ErrLeadershipLost is the cause (see context.Cause) with which a
// Leadership's context is cancelled when the leadership is lost: a renewal
// showed the lock gone, or no renewal confirmed it before its safety
// deadline. It is lock.ErrLockLost (code lock.CodeLockLost), since a
// leadership is a held lock.
var ErrLeadershipLost = lock.ErrLockLost

// ErrResigned is the cause with which a Leadership's context is cancelled
// by Resign. It is a *lease.Error with CodeResigned; treat it as
// read-only.
var ErrResigned error = &lease.Error{Package: "election", Code: CodeResigned, Detail: "resigned"}
