package etcd

import (
	"strconv"
	"strings"
	"time"
)

// holding is what a lock's key records: who holds it, until when on the
// holder's clock, the TTL that was asked for, so that a Renew with the same
// duration keeps the etcd lease alive instead of replacing it, and the value
// the holder attached (AcquireValue), if any.
//
// Its encoding is text. Without a value it is "EXPIRES TTL EXECUTIONID":
// the expiry in Unix nanoseconds, the requested TTL in seconds, then the
// execution ID as given, which may hold any bytes (spaces included) because
// it comes last. With a value it is "v2 EXPIRES TTL N EXECUTIONIDVALUE": a
// tag that no expiry starts with, the same two numbers, the length of the
// execution ID in bytes, then the execution ID and the value, both as given.
// A holding without a value is written in the first form, so keys written
// before values existed, and the versions that wrote them, still read alike.
type holding struct {
	executionID string
	expiresAt   time.Time
	ttl         int64 // seconds, as requested (the server may grant more)
	value       []byte
}

// valueTag starts the encoding of a holding with a value.
const valueTag = "v2 "

func (h holding) encode() string {
	times := strconv.FormatInt(h.expiresAt.UnixNano(), 10) + " " + strconv.FormatInt(h.ttl, 10) + " "
	if len(h.value) == 0 {
		return times + h.executionID
	}
	return valueTag + times + strconv.Itoa(len(h.executionID)) + " " + h.executionID + string(h.value)
}

// decodeHolding parses a value written by encode. ok is false for anything
// else, such as a key under the prefix that this package did not write.
func decodeHolding(v []byte) (h holding, ok bool) {
	s, tagged := strings.CutPrefix(string(v), valueTag)
	n := 3
	if tagged {
		n = 4
	}
	parts := strings.SplitN(s, " ", n)
	if len(parts) != n {
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
	h = holding{executionID: parts[2], expiresAt: time.Unix(0, ns), ttl: ttl}
	if tagged {
		size, err := strconv.Atoi(parts[2])
		if err != nil || size < 0 || size > len(parts[3]) {
			return holding{}, false
		}
		h.executionID = parts[3][:size]
		if rest := parts[3][size:]; rest != "" {
			h.value = []byte(rest)
		}
	}
	return h, h.executionID != ""
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
