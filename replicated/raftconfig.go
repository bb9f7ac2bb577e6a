package replicated

import (
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// raftConfig returns the raft configuration a node runs with: the caller's
// (raft's defaults when nil) with the settings the node makes itself, or a
// *lease.Error naming the first field of it the node cannot honour.
//
// Every field of raft.Config, and what the node does with it:
//
//   - ProtocolVersion: refused below 3. The node names servers by ID
//     (Config.ID, Server.ID), which older protocols do not; they exist to
//     talk to servers on older raft releases, which are no nodes of this
//     service.
//   - HeartbeatTimeout, ElectionTimeout, CommitTimeout, MaxAppendEntries,
//     LeaderLeaseTimeout, TrailingLogs, SnapshotInterval, SnapshotThreshold,
//     PreVoteDisabled, NoLegacyTelemetry: honoured as raft honours them
//     (raft validates the timeouts).
//   - ShutdownOnRemove: set to false by the node. raft leaves unanswered
//     what waits in its queues when it shuts down, and the node needs
//     every entry it proposed answered; a removed node stays up, outside
//     the configuration, until Close.
//   - BatchApplyCh: set by the node (its batcher is the only proposer); a
//     false here cannot be told from the default and is overridden.
//   - LocalID: refused unless empty or equal to Config.ID, which the node
//     sets it to.
//   - NotifyCh: refused: the node consumes leadership changes.
//   - Logger, LogOutput, LogLevel: without a Logger the node builds one
//     that writes to LogOutput (stderr when nil) at LogLevel (warnings and
//     errors when empty without LogOutput, raft's default with it), and
//     hands it to its transport and snapshot store too. A nil Raft counts
//     as both empty, although raft.DefaultConfig sets LogLevel "DEBUG"; a
//     Config built from raft.DefaultConfig keeps that level unless it sets
//     LogLevel. A LogLevel hclog does not know is refused.
//   - NoSnapshotRestoreOnStart: refused: the node's state lives in memory
//     and is rebuilt from the latest snapshot when it starts; without the
//     restore it would come up empty and issue lease IDs again.
//   - RestoreCommittedLogs: refused: it needs a log store that tracks
//     commits, and the node's log store does not.
func raftConfig(cfg *Config) (*raft.Config, error) {
	rc := raft.DefaultConfig()
	// raft's defaults log at DEBUG; a node configured with no Raft logs
	// warnings and errors, as when LogLevel is left empty.
	rc.LogLevel = ""
	if cfg.Raft != nil {
		c := *cfg.Raft
		rc = &c
	}
	switch {
	case rc.ProtocolVersion < 3:
		return nil, invalid("Raft.ProtocolVersion", "must be 3 or more: the node names servers by ID")
	case rc.LocalID != "" && string(rc.LocalID) != cfg.ID:
		return nil, invalid("Raft.LocalID", "must be empty or equal to ID, "+cfg.ID+": the node's raft ID is its ID")
	case rc.NotifyCh != nil:
		return nil, invalid("Raft.NotifyCh", "must be nil: the node consumes leadership changes")
	case rc.LogLevel != "" && hclog.LevelFromString(rc.LogLevel) == hclog.NoLevel:
		return nil, invalid("Raft.LogLevel", "must be trace, debug, info, warn, error or off, not "+rc.LogLevel)
	case rc.NoSnapshotRestoreOnStart:
		return nil, invalid("Raft.NoSnapshotRestoreOnStart", "must be false: the node's state is rebuilt from its latest snapshot when it starts")
	case rc.RestoreCommittedLogs:
		return nil, invalid("Raft.RestoreCommittedLogs", "must be false: the node's log store does not track commits")
	}
	rc.LocalID = raft.ServerID(cfg.ID)
	// The batcher is the only proposer: a buffered apply channel lets
	// raft's leader loop take several of its entries into one write to
	// the log store (one fsync) instead of one each.
	rc.BatchApplyCh = true
	// A removed node keeps raft running until Close, so that raft answers
	// every entry the node proposed before its removal.
	rc.ShutdownOnRemove = false
	if rc.Logger == nil {
		out, level := rc.LogOutput, hclog.LevelFromString(rc.LogLevel)
		if out == nil {
			out = os.Stderr
			if level == hclog.NoLevel {
				level = hclog.Warn
			}
		}
		rc.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft", Level: level, Output: out})
	}
	if err := raft.ValidateConfig(rc); err != nil {
		return nil, invalid("Raft", err.Error())
	}
	return rc, nil
}
