package claim

import "github.com/leasehold/lease/claim/claimstore"

// The names below are package claimstore's, the claim-store seam, under
// the names users write: an item, a claim and what a Store is asked are
// one type whichever package names them. A store implementation imports
// claimstore; a program using a work queue needs only this package.

// Store is the storage half of a Broker; see [claimstore.Store].
type Store = claimstore.Store

// NewItem is an item to enqueue; see [claimstore.NewItem].
type NewItem = claimstore.NewItem

// Item is a snapshot of an item; see [claimstore.Item].
type Item = claimstore.Item

// ItemID identifies an item of a store; see [claimstore.ItemID].
type ItemID = claimstore.ItemID

// State is where an item is in its life; see [claimstore.State].
type State = claimstore.State

// Failure is one failed attempt of an item; see [claimstore.Failure].
type Failure = claimstore.Failure

// Counts are the numbers of items of one queue in each state; see
// [claimstore.Counts].
type Counts = claimstore.Counts

// Claim is one owner's hold on one item; see [claimstore.Claim].
type Claim = claimstore.Claim

// Ref identifies one claim of one item; see [claimstore.Ref].
type Ref = claimstore.Ref

// ClaimRequest asks a Store for claims; see [claimstore.ClaimRequest].
type ClaimRequest = claimstore.ClaimRequest

// Settlement says how to end a live claim; see [claimstore.Settlement].
type Settlement = claimstore.Settlement

// Settle is how a claim ends; see [claimstore.Settle].
type Settle = claimstore.Settle

// Query selects items to List; see [claimstore.Query].
type Query = claimstore.Query

// QueueQuery selects queues to list; see [claimstore.QueueQuery].
type QueueQuery = claimstore.QueueQuery

// QueueInfo describes one queue; see [claimstore.QueueInfo].
type QueueInfo = claimstore.QueueInfo

// Retention says how long a store keeps finished items; see
// [claimstore.Retention].
type Retention = claimstore.Retention

// StandardRetention keeps completed and cancelled items for a day and dead
// letters for a week; see [claimstore.StandardRetention].
var StandardRetention = claimstore.StandardRetention

// The states of an item; see [claimstore.State].
const (
	Visible   = claimstore.Visible
	Delayed   = claimstore.Delayed
	Claimed   = claimstore.Claimed
	Dead      = claimstore.Dead
	Completed = claimstore.Completed
	Cancelled = claimstore.Cancelled
)

// The ways to settle a claim, for store implementations; see
// [claimstore.Settle].
const (
	SettleComplete = claimstore.SettleComplete
	SettleRetry    = claimstore.SettleRetry
	SettleDead     = claimstore.SettleDead
	SettleSnooze   = claimstore.SettleSnooze
)

// The limits on an item, which every store applies; see
// [claimstore.MaxPriority], [claimstore.MaxTimeout], [claimstore.MaxTags]
// and [claimstore.MaxTagLen].
const (
	MaxPriority = claimstore.MaxPriority
	MaxTimeout  = claimstore.MaxTimeout
	MaxTags     = claimstore.MaxTags
	MaxTagLen   = claimstore.MaxTagLen
)
