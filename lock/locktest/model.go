package locktest

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/anishathalye/porcupine"
)

type opKind uint8

const (
	opAcquire opKind = iota + 1
	opRenew
	opRelease
)

func (k opKind) String() string {
	switch k {
	case opAcquire:
		return "acquire"
	case opRenew:
		return "renew"
	case opRelease:
		return "release"
	}
	return "op(" + strconv.Itoa(int(k)) + ")"
}

// modelInput is one call: acquire by exec, or renew or release of exec's
// holding with token.
type modelInput struct {
	kind  opKind
	exec  string
	token uint64
}

// modelOutput is its result: acquired (with the token) or renewed, and
// whether it failed. The histories are recorded with leases that outlast
// them, so nothing expires and every call must succeed.
type modelOutput struct {
	ok    bool
	token uint64
	err   bool
}

// lockState is the single lock: who holds it with which token, and the
// highest token issued, which every new token must exceed.
type lockState struct {
	held    bool
	exec    string
	token   uint64
	highest uint64
}

// singleLock is the sequential specification of one lock.
var singleLock = porcupine.Model{
	Init: func() any { return lockState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(lockState), input.(modelInput), output.(modelOutput)
		if out.err {
			return false, s
		}
		owns := s.held && s.exec == in.exec && s.token == in.token
		switch in.kind {
		case opAcquire:
			if !out.ok {
				return s.held, s
			}
			if s.held || out.token <= s.highest {
				return false, s
			}
			return true, lockState{held: true, exec: in.exec, token: out.token, highest: out.token}
		case opRenew:
			return out.ok == owns, s
		case opRelease:
			if owns {
				s.held = false
			}
			return true, s
		}
		return false, s
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(modelInput), output.(modelOutput)
		return fmt.Sprintf("%s(%s, %d) -> ok=%t token=%d err=%t", in.kind, in.exec, in.token, out.ok, out.token, out.err)
	},
	DescribeState: func(state any) string {
		s := state.(lockState)
		if !s.held {
			return fmt.Sprintf("free (highest %d)", s.highest)
		}
		return fmt.Sprintf("held by %s with %d", s.exec, s.token)
	},
}

// describeIllegal logs the history in call order, up to a limit, with
// call and return stamps, so a reader can find the operation that no
// linearization admits.
func describeIllegal(e *env, history []porcupine.Operation) {
	e.Helper()
	history = slices.Clone(history)
	slices.SortFunc(history, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	const limit = 400
	for _, op := range history[:min(limit, len(history))] {
		e.Logf("[%d, %d] worker %d: %s", op.Call, op.Return, op.ClientId, singleLock.DescribeOperation(op.Input, op.Output))
	}
}
