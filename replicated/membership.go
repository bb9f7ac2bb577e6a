package replicated

import (
	"context"
	"time"

	"github.com/hashicorp/raft"
)

// Member is one server of the cluster's configuration. It is a plain value.
type Member struct {
	ID      string
	Address string
	// Voter tells a voting member from one that only receives the log.
	Voter bool
	// Leader is true for the member this node knows as the leader.
	Leader bool
}

// AddVoter adds a voting member, or makes a member a voter, once the
// cluster has committed the change; the new member receives a snapshot or
// the log from the leader and then votes. Like every membership call it
// runs on the leader: a follower forwards it (or, without forwarding,
// fails with *NotLeaderError). A member joins with a Config without
// Bootstrap and an empty Dir.
func (n *Node) AddVoter(ctx context.Context, id, address string) error {
	return n.membership(ctx, memberAddVoter, id, address)
}

// AddNonVoter adds a member that receives the log but does not vote (a
// read replica, or a node catching up before it is made a voter).
func (n *Node) AddNonVoter(ctx context.Context, id, address string) error {
	return n.membership(ctx, memberAddNonVoter, id, address)
}

// RemoveServer removes a member once the cluster has committed the change.
// Removing the leader itself makes it step down once the change commits,
// and the others elect a new leader.
func (n *Node) RemoveServer(ctx context.Context, id string) error {
	return n.membership(ctx, memberRemove, id, "")
}

// TransferLeadership makes the leader hand leadership to the voter id, or
// to the most up to date voter when id is empty, and returns once the
// leader has stepped down.
func (n *Node) TransferLeadership(ctx context.Context, id string) error {
	return n.membership(ctx, memberTransfer, id, "")
}

// memberOp is a membership call a follower forwards to the leader.
type memberOp byte

const (
	memberAddVoter memberOp = iota + 1
	memberAddNonVoter
	memberRemove
	memberTransfer
)

var memberNames = [...]string{memberAddVoter: "addvoter", memberAddNonVoter: "addnonvoter", memberRemove: "removeserver", memberTransfer: "transferleadership"}

func (o memberOp) String() string {
	if int(o) < len(memberNames) && memberNames[o] != "" {
		return memberNames[o]
	}
	return "unknown"
}

// membership runs a membership call on this node, or forwards it to the
// leader when this node does not lead.
func (n *Node) membership(ctx context.Context, op memberOp, id, address string) error {
	err := n.memberHere(ctx, op, id, address)
	if f, ok := n.forwardable(err); ok {
		return f.member(ctx, op, id, address)
	}
	return err
}

// memberHere runs a membership call on this node, which must lead.
func (n *Node) memberHere(ctx context.Context, op memberOp, id, address string) error {
	name := op.String()
	switch op {
	case memberAddVoter:
		if err := checkMember(name, id, address); err != nil {
			return err
		}
		return n.changeMembers(ctx, name, func(timeout time.Duration) raft.IndexFuture {
			return n.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(address), 0, timeout)
		})
	case memberAddNonVoter:
		if err := checkMember(name, id, address); err != nil {
			return err
		}
		return n.changeMembers(ctx, name, func(timeout time.Duration) raft.IndexFuture {
			return n.raft.AddNonvoter(raft.ServerID(id), raft.ServerAddress(address), 0, timeout)
		})
	case memberRemove:
		if id == "" {
			return invalidOp(name, "id", "must not be empty")
		}
		return n.changeMembers(ctx, name, func(timeout time.Duration) raft.IndexFuture {
			return n.raft.RemoveServer(raft.ServerID(id), 0, timeout)
		})
	case memberTransfer:
		return n.transfer(ctx, id)
	}
	return invalidOp(name, "op", "unknown membership call")
}

// beginAdmin starts the membership call op: it checks ctx and the
// caller's right to it, and holds off Close (verifyMu), which would leave
// the call unanswered, until done is called.
func (n *Node) beginAdmin(ctx context.Context, op string) (done func(), err error) {
	if err := n.admin(ctx, op); err != nil {
		return nil, err
	}
	n.verifyMu.RLock()
	if err := n.isOpen(op); err != nil {
		n.verifyMu.RUnlock()
		return nil, err
	}
	return n.verifyMu.RUnlock, nil
}

// transfer hands leadership to id, or to the most up to date voter.
func (n *Node) transfer(ctx context.Context, id string) error {
	const op = "transferleadership"
	done, err := n.beginAdmin(ctx, op)
	if err != nil {
		return err
	}
	defer done()
	var f raft.Future
	if id == "" {
		f = n.raft.LeadershipTransfer()
	} else {
		m, err := n.members(op)
		if err != nil {
			return err
		}
		addr := ""
		for _, s := range m {
			if s.ID == id && s.Voter {
				addr = s.Address
			}
		}
		if addr == "" {
			return invalidOp(op, "id", id+" is not a voting member")
		}
		f = n.raft.LeadershipTransferToServer(raft.ServerID(id), raft.ServerAddress(addr))
	}
	if err := f.Error(); err != nil {
		return n.raftError(op, err)
	}
	return nil
}

// Members returns the cluster's latest configuration as this node knows
// it (on a follower, possibly behind the leader's).
func (n *Node) Members(ctx context.Context) ([]Member, error) {
	const op = "members"
	if err := n.readable(ctx, op); err != nil {
		return nil, err
	}
	return n.members(op)
}

func (n *Node) members(op string) ([]Member, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, n.raftError(op, err)
	}
	leader, _ := n.Leader()
	var out []Member
	for _, s := range f.Configuration().Servers {
		out = append(out, Member{ID: string(s.ID), Address: string(s.Address), Voter: s.Suffrage == raft.Voter, Leader: string(s.ID) == leader})
	}
	return out, nil
}

// Status is a node's view of the cluster, for health checks. It is a plain
// value.
type Status struct {
	ID    string
	State string // "leader", "follower", "candidate" or "shutdown"
	// LeaderID and LeaderAddress name the leader this node knows; empty
	// when it knows none.
	LeaderID, LeaderAddress string
	Term                    uint64
	CommitIndex             uint64 // the last log index known committed
	AppliedIndex            uint64 // the last log index applied to the service
	// LastContact is when a follower last heard from the leader; zero on
	// the leader and on a node that never heard from one.
	LastContact time.Time
	// Serving tells whether the node can serve writes and linearizable
	// reads now: it leads and has applied its term's barrier, or it knows
	// a leader to forward them to.
	Serving bool
}

// Status returns the node's state. It does not block and does not cross
// the network.
func (n *Node) Status() Status {
	id, addr := n.Leader()
	st := Status{
		ID:            n.id,
		State:         stateName(n.raft.State()),
		LeaderID:      id,
		LeaderAddress: addr,
		Term:          n.raft.CurrentTerm(),
		CommitIndex:   n.raft.CommitIndex(),
		AppliedIndex:  n.raft.AppliedIndex(),
	}
	if st.State != "leader" {
		st.LastContact = n.raft.LastContact()
	}
	select {
	case <-n.closing:
		st.State = "shutdown"
		return st
	default:
	}
	if t := n.term.Load(); t != nil && st.State == "leader" {
		select {
		case <-t.ready:
			st.Serving = true
		default:
		}
	} else if st.State == "follower" && id != "" && n.fwd != nil {
		st.Serving = true
	}
	return st
}

func stateName(s raft.RaftState) string {
	switch s {
	case raft.Leader:
		return "leader"
	case raft.Follower:
		return "follower"
	case raft.Candidate:
		return "candidate"
	}
	return "shutdown"
}

func checkMember(op, id, address string) error {
	switch {
	case id == "":
		return invalidOp(op, "id", "must not be empty")
	case address == "":
		return invalidOp(op, "address", "must not be empty")
	}
	return nil
}

// admin checks what a membership change needs: a live context, an open
// node, and leadership.
func (n *Node) admin(ctx context.Context, op string) error {
	if err := n.readable(ctx, op); err != nil {
		return err
	}
	if n.raft.State() != raft.Leader {
		return n.notLeader(op)
	}
	return nil
}

func (n *Node) isOpen(op string) error {
	select {
	case <-n.closing:
		return closedError(op)
	default:
		return nil
	}
}

// changeMembers asks raft for a configuration change and waits until it is
// committed. Close waits for changes under way (verifyMu) before it shuts
// raft down, which would leave them unanswered.
func (n *Node) changeMembers(ctx context.Context, op string, change func(timeout time.Duration) raft.IndexFuture) error {
	done, err := n.beginAdmin(ctx, op)
	if err != nil {
		return err
	}
	defer done()
	var timeout time.Duration
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl), 1)
	}
	if err := change(timeout).Error(); err != nil {
		return n.raftError(op, err)
	}
	return nil
}

// readyPoll is how often Ready looks at the node's status.
const readyPoll = 5 * time.Millisecond

// Ready waits until the node can serve writes and linearizable reads
// (Status().Serving): it leads and has applied its term's barrier, or it
// knows a leader to forward them to. A single-node cluster is ready once it
// has elected itself, a moment after Open.
func (n *Node) Ready(ctx context.Context) error {
	const op = "ready"
	if err := n.readable(ctx, op); err != nil {
		return err
	}
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	for !n.Status().Serving {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		case <-n.closing:
			return closedError(op)
		}
	}
	return nil
}
