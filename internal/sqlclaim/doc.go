// Package sqlclaim is the claim store engine that the PostgreSQL and the
// SQLite claim stores share: every flow of claim.Store (enqueue, claim,
// extend, settle, cancel, dead letters, retry, pause, queues, inspection,
// cleaning), the group committer that coalesces the calls of many
// goroutines into one round trip, the registry of the Lost functions of
// live claims, and the reading of an item's row. A store supplies a
// Dialect: how each step runs on its database (statements, argument
// style, executor and transaction types), how its errors read, and how
// its waiters learn of changes.
//
// The engine imports no database driver: it is written against the
// Dialect interface and against plain values, so that the root module
// gains no dependency.
package sqlclaim
