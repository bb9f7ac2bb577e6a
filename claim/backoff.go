package claim

import "time"

// Backoff returns the delay before the retry of an item whose attempt
// failed: min(maxDelay, baseDelay * 2^(attempt-1)), without overflowing for
// any attempt. Attempts below 1 count as 1; a non-positive baseDelay gives 0.
func Backoff(attempt int, baseDelay, maxDelay time.Duration) time.Duration {
	if baseDelay <= 0 {
		return 0
	}
	shift := max(attempt-1, 0)
	if shift >= 63 || baseDelay > maxDelay>>shift {
		return maxDelay
	}
	return baseDelay << shift
}
