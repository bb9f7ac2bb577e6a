package claim_test

import (
	"testing"

	"github.com/leasehold/lease/claim"
)

// BenchmarkEnqueueClaimComplete is the cost of one item's whole life, with
// 100,000 other items queued ahead of it.
func BenchmarkEnqueueClaimComplete(b *testing.B) { benchItemLife(b, 100_000) }

// BenchmarkEnqueueClaimCompleteIdle is the same with nothing else queued:
// a queue whose items are handled as soon as they arrive.
func BenchmarkEnqueueClaimCompleteIdle(b *testing.B) { benchItemLife(b, 0) }

// benchItemLife enqueues, claims and completes one item per iteration, with
// queued other items visible ahead of it.
func benchItemLife(b *testing.B, queued int) {
	br, _, _ := newBroker(b)
	payload := []byte("payload")
	for range queued {
		if _, err := br.Enqueue(ctx, q, payload); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := br.Enqueue(ctx, q, payload); err != nil {
			b.Fatal(err)
		}
		cs, err := br.Claim(ctx, q, "w", 1, ttl)
		if err != nil || len(cs) != 1 {
			b.Fatal(len(cs), err)
		}
		if err := br.Complete(ctx, cs[0]); err != nil {
			b.Fatal(err)
		}
	}
	if got := countsOf(b, br, q); got != (claim.Counts{Visible: queued}) {
		b.Fatalf("counts %+v", got)
	}
}

// BenchmarkClaimHeartbeat is the cost of one heartbeat of a live claim.
func BenchmarkClaimHeartbeat(b *testing.B) {
	br, _, _ := newBroker(b)
	if _, err := br.Enqueue(ctx, q, nil); err != nil {
		b.Fatal(err)
	}
	cs, err := br.Claim(ctx, q, "w", 1, ttl)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := br.Heartbeat(ctx, cs[0], ttl); err != nil {
			b.Fatal(err)
		}
	}
}
