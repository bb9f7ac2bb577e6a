package console_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/console"
)

// benchConsole is a console over a Memory holding n items in one queue
// (a tenth of them dead) and a few other queues.
func benchConsole(b *testing.B, n int) http.Handler {
	svc := lease.Must(lease.New())
	mem := lease.Must(claim.NewMemory(svc))
	broker := lease.Must(claim.New(mem))
	b.Cleanup(func() {
		require.NoError(b, broker.Close())
		require.NoError(b, svc.Close())
	})
	const batch = 1000
	items := make([]claim.NewItem, 0, batch)
	for i := range n {
		items = append(items, claim.NewItem{Queue: "big", Payload: []byte(`{"n":` + strconv.Itoa(i) + `}`),
			Tags: []string{"t" + strconv.Itoa(i%7)}, MaxAttempts: 3})
		if len(items) == batch {
			_, err := broker.EnqueueMany(ctx, items)
			require.NoError(b, err)
			items = items[:0]
		}
	}
	for q := range 20 {
		_, err := broker.Enqueue(ctx, "small-"+strconv.Itoa(q), []byte("x"))
		require.NoError(b, err)
	}
	return lease.Must(console.New(console.Config{Service: svc, Broker: broker, Recorder: console.NewRecorder(svc.Clock())}))
}

// BenchmarkPages renders the queues page and a page of a 100k-item queue's
// list, in HTML.
func BenchmarkPages(b *testing.B) {
	h := benchConsole(b, 100_000)
	for _, bc := range []struct{ name, path string }{
		{"queues", "/"},
		{"items", "/queue?queue=big"},
		{"items-after-50000", "/queue?queue=big&after=50000"},
		{"items-tag-visible", "/queue?queue=big&tag=t3&state=visible"},
		{"item", "/item?id=50000"},
	} {
		path := bc.path
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
				if w.Code != http.StatusOK {
					b.Fatal(w.Code, w.Body.String())
				}
			}
		})
	}
}
