package replicated

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"time"

	"github.com/hashicorp/raft"

	"github.com/leasehold/lease"
)

// A leader that loses its place while committing an entry of commands
// cannot tell whether the entry was committed: the next leader may commit
// it, or overwrite it. raft answers such an entry with ErrLeadershipLost.
// The node settles that itself, for as long as the caller's context
// allows, by watching its own log: every entry of commands carries a key
// of its own in raft's Extensions, unique to the node and the entry. The
// node keeps running as a follower and applies whatever is committed at
// the entry's index. If what it applies there carries the key, the entry
// was committed, and the results the FSM computed for it (every node
// computes the same) are the commands' outcome. If it applies something
// else there, the entry is gone for good, and its commands are sent
// again, to the new leader. Only when the context ends first, the node
// closes, or a snapshot replaces the log past the index before the node
// could read it, does the caller get ErrOutcomeUnknown.

// CodeOutcomeUnknown is the code of ErrOutcomeUnknown: a write that may or
// may not have been committed.
const CodeOutcomeUnknown lease.Code = "LS_OUTCOME_UNKNOWN"

// ErrOutcomeUnknown is matched by the error of a write whose outcome the
// node could not settle: its leader lost leadership while committing it,
// and the call's context ended (or the node closed, or a snapshot replaced
// the log past the write) before the node learned whether the next leader
// committed it; or a follower forwarded it and the connection to the
// leader failed after it was sent. The write may have been applied once,
// or not at all; never twice. Such an error is a *lease.Error with
// CodeOutcomeUnknown and Package "replicated", and also matches
// raft.ErrLeadershipLost, the context's error when the context ended
// first, and lease.ErrClosed when the node closed first.
var ErrOutcomeUnknown = errors.New("replicated: outcome unknown")

// outcomeUnknown returns the error of op's write whose outcome is not
// known; cause is what stopped the node settling it (nil for a leader that
// went away, ctx.Err() for a context).
func outcomeUnknown(op string, cause error) error {
	detail := "the leader lost leadership while committing it; it may or may not have been applied"
	if cause != nil {
		detail += " (" + cause.Error() + " before the node learned which)"
	}
	return unknownError(op, detail, cause)
}

// cutUnknown returns the error of op's write forwarded to the leader
// whose connection failed after the write was sent: the leader may have
// applied it. cause is what cut it (nil when the connection failed by
// itself); the error matches ErrOutcomeUnknown and cause.
func cutUnknown(op string, cause error) error {
	detail := "the connection to the leader failed after it was sent; it may or may not have been applied"
	if cause != nil {
		detail += " (" + cause.Error() + ")"
	}
	return unknownError(op, detail, cause)
}

// resentUnknown returns the error of op's write that was sent again after
// its leader went away with it, and failed with err: the failure may come
// of the first attempt having been applied. It matches ErrOutcomeUnknown
// and err.
func resentUnknown(op string, err error) error {
	return unknownError(op, "its leader went away with it, and sent again it failed ("+err.Error()+"): the first attempt may have been applied", err)
}

// unknownError is an error of CodeOutcomeUnknown saying detail, which
// matches ErrOutcomeUnknown, raft.ErrLeadershipLost and cause.
func unknownError(op, detail string, cause error) error {
	le := &lease.Error{Package: "replicated", Code: CodeOutcomeUnknown, Op: op, Detail: detail, Err: ErrOutcomeUnknown}
	return &causedError{le: le, cause: errors.Join(raft.ErrLeadershipLost, cause)}
}

// uncertain is the error of op's write whose leader lost its place while
// committing it, when nothing is left to settle it with.
func uncertain(op string) error { return outcomeUnknown(op, nil) }

// proposal is an entry of commands this node proposed as leader, tracked
// by the FSM until its outcome is known. Its fields are guarded by the
// FSM's mu.
type proposal struct {
	key string
	// index is the entry's log index, set when raft answered it with
	// ErrLeadershipLost; 0 before.
	index uint64
	// restores is the FSM's count of snapshot restores when the entry was
	// proposed: a restore after it may have skipped the entry.
	restores int64
	done     bool // the FSM applied the entry; out is what it answered
	out      any
	// waiters counts the callers still waiting for the outcome; the
	// proposal is forgotten when none is left.
	waiters int
}

// proposalKeys makes the keys of a node's entries: 8 random bytes fixed
// for the node, then a sequence number.
type proposalKeys struct {
	prefix [8]byte
	seq    uint64 // owned by the batcher
}

func newProposalKeys() *proposalKeys {
	k := &proposalKeys{}
	_, _ = rand.Read(k.prefix[:]) // crypto/rand.Read never fails
	return k
}

// next returns a key no entry of any node has carried.
func (k *proposalKeys) next() []byte {
	k.seq++
	return binary.AppendUvarint(k.prefix[:len(k.prefix):len(k.prefix)], k.seq)
}

// track starts tracking the entry of commands keyed key.
func (f *fsm) track(key []byte) *proposal {
	p := &proposal{key: string(key), restores: f.restores.Load()}
	f.mu.Lock()
	if f.proposals == nil {
		f.proposals = make(map[string]*proposal)
	}
	f.proposals[p.key] = p
	f.mu.Unlock()
	f.tracking.Add(1)
	return p
}

// forget stops tracking p.
func (f *fsm) forget(p *proposal) {
	f.mu.Lock()
	f.forgetLocked(p)
	f.mu.Unlock()
}

func (f *fsm) forgetLocked(p *proposal) {
	if f.proposals[p.key] == p {
		delete(f.proposals, p.key)
		f.tracking.Add(-1)
	}
}

// matchLocked records what the FSM answered for an applied entry keyed
// key, if it is a tracked proposal.
func (f *fsm) matchLocked(key []byte, out any) {
	if p, ok := f.proposals[string(key)]; ok {
		p.done, p.out = true, out
		f.forgetLocked(p)
	}
}

// uncertain marks p, whose entry raft answered with ErrLeadershipLost at
// index, as awaited by waiters callers. It reports false when the outcome
// cannot be settled (no index): p is forgotten.
func (f *fsm) uncertain(p *proposal, index uint64, waiters int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if index == 0 || waiters == 0 {
		f.forgetLocked(p)
		return false
	}
	p.index, p.waiters = index, waiters
	return true
}

// outcome is what a caller learns of an uncertain proposal.
type outcome int

const (
	outcomeApplied    outcome = iota // the entry was committed: out holds its results
	outcomeDropped                   // another entry took its index: nothing was applied
	outcomeUnknownYet                // not known yet
	outcomeLost                      // a snapshot restore may have skipped it: never known
)

// settleOutcome waits until the outcome of p is known, the context ends, the
// node closes or it is removed from the configuration, and returns the
// result of the command at pos of the entry when it was applied; drop
// reports an entry that was not. Every caller
// of a proposal calls settleOutcome once.
func (n *Node) settleOutcome(ctx context.Context, op string, p *proposal, pos int) (r result, drop bool) {
	f := n.fsm
	for {
		f.mu.Lock()
		o := outcomeUnknownYet
		switch {
		case p.done:
			o = outcomeApplied
		case f.applied >= p.index && f.restores.Load() != p.restores:
			o = outcomeLost
		case f.applied >= p.index:
			o = outcomeDropped
		}
		var wait chan struct{}
		if o == outcomeUnknownYet {
			if f.appliedCh == nil {
				f.appliedCh = make(chan struct{})
			}
			wait = f.appliedCh
		} else {
			p.waiters--
			if p.waiters == 0 {
				f.forgetLocked(p)
			}
		}
		out := p.out
		f.mu.Unlock()
		switch o {
		case outcomeApplied:
			if res, ok := out.([]result); ok && pos < len(res) {
				return res[pos], false
			}
			if err, ok := out.(error); ok {
				return result{err: n.raftError(op, err)}, false
			}
			return result{err: uncertain(op)}, false
		case outcomeDropped:
			return result{}, true
		case outcomeLost:
			return result{err: uncertain(op)}, false
		}
		if n.tookIndex(p) {
			// raft applied another entry at p's index: a no-op or a
			// configuration of the next leader, which never reaches the
			// FSM, so the FSM's index may not move for a long while.
			n.giveUp(p)
			return result{}, true
		}
		if n.outside() {
			// Removed from the configuration: no leader sends this node
			// another entry, so it would never learn the outcome.
			n.giveUp(p)
			return result{err: outcomeUnknown(op, n.notLeader(op))}, false
		}
		select {
		case <-wait:
		case <-time.After(outcomePoll):
		case <-ctx.Done():
			n.giveUp(p)
			return result{err: outcomeUnknown(op, ctx.Err())}, false
		case <-n.stopped:
			n.giveUp(p)
			return result{err: outcomeUnknown(op, closedError(op))}, false
		}
	}
}

// outcomePoll is how often settleOutcome looks for an entry of raft's own
// at the index of an uncertain write.
const outcomePoll = 20 * time.Millisecond

// tookIndex reports whether raft applied, at the index of p, an entry that
// is not p's: entries up to raft's applied index are committed, so the
// local log holds the committed entry there. An entry that is p's, or one
// the log no longer holds, is left to the FSM to settle.
func (n *Node) tookIndex(p *proposal) bool {
	n.fsm.mu.Lock()
	index, done := p.index, p.done
	n.fsm.mu.Unlock()
	if done || n.logs == nil || n.raft.AppliedIndex() < index {
		return false
	}
	var l raft.Log
	if err := n.logs.GetLog(index, &l); err != nil {
		return false
	}
	return l.Type != raft.LogCommand || string(l.Extensions) != p.key
}

// giveUp is settleOutcome's end for a caller that stopped waiting.
func (n *Node) giveUp(p *proposal) {
	f := n.fsm
	f.mu.Lock()
	p.waiters--
	if p.waiters == 0 {
		f.forgetLocked(p)
	}
	f.mu.Unlock()
}
