package sqlite

// PendingWrites returns how many writes wait for the store's next batch.
func PendingWrites(s *ClaimStore) int { return s.d.commit.b.Pending() }

// The statements of Counts and Queues, for their query plans.
var SQLCounts, SQLQueues = sqlCounts, sqlQueues
