package sqlite

// PendingWrites returns how many writes wait for the store's next batch.
func PendingWrites(s *ClaimStore) int {
	s.d.commit.mu.Lock()
	defer s.d.commit.mu.Unlock()
	return len(s.d.commit.pending)
}
