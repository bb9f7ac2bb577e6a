package etcd

import (
	"strconv"
	"strings"
	"time"
)

// holding is what a lock's key records: who holds it, until when on the
// holder's clock, and the TTL that was asked for, so that a Renew with the
// same duration keeps the etcd lease alive instead of replacing it.
//
// Its encoding is text, "EXPIRES TTL EXECUTIONID": the expiry in Unix
// nanoseconds, the requested TTL in seconds, then the execution ID as given,
// which may hold any bytes (spaces included) because it comes last.
type holding struct {
	executionID string
	expiresAt   time.Time
	ttl         int64 // seconds, as requested (the server may grant more)
}

func (h holding) encode() string {
	return strconv.FormatInt(h.expiresAt.UnixNano(), 10) + " " + strconv.FormatInt(h.ttl, 10) + " " + h.executionID
}

// decodeHolding parses a value written by encode. ok is false for anything
// else, such as a key under the prefix that this package did not write.
func decodeHolding(v []byte) (h holding, ok bool) {
	parts := strings.SplitN(string(v), " ", 3)
	if len(parts) != 3 || parts[2] == "" {
		return holding{}, false
	}
	ns, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return holding{}, false
	}
	ttl, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || ttl <= 0 {
		return holding{}, false
	}
	return holding{executionID: parts[2], expiresAt: time.Unix(0, ns), ttl: ttl}, true
}

// MaxDuration is the longest lease the provider accepts: etcd's largest
// lease TTL.
const MaxDuration = 9_000_000_000 * time.Second

// ttlSeconds is d rounded up to whole seconds, etcd's unit, so that a
// positive duration never becomes a shorter lease.
func ttlSeconds(d time.Duration) int64 {
	s := int64(d / time.Second)
	if d%time.Second > 0 {
		s++
	}
	return s
}
