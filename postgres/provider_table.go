package postgres

// Table returns the provider's table as it appears in its statements:
// quoted, and qualified with its schema when one was set (as
// [ClaimStore.Table] does for a store).
func (p *LockProvider) Table() string { return p.table }
