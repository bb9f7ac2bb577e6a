package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/postgres"
)

// table holds the example's items.
const table = "postgres_queue_example"

// queueConn is a connection to the shared queue: a pool, the store on it
// and the Broker over the store.
type queueConn struct {
	pool   *pgxpool.Pool
	broker *claim.Broker
}

// openQueue connects to the server and makes sure the table exists.
func openQueue(ctx context.Context, dsn string) (*queueConn, error) {
	if dsn == "" {
		return nil, fmt.Errorf("%w: LEASE_POSTGRES_DSN is not set", errUnreachable)
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUnreachable, err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("%w at %s: %v", errUnreachable, dsn, err)
	}
	store, err := postgres.NewClaimStore(pool, postgres.WithClaimTable(table))
	if err == nil {
		err = store.Migrate(ctx) // safe to run from every process
	}
	var broker *claim.Broker
	if err == nil {
		broker, err = claim.New(store)
	}
	if err != nil {
		pool.Close()
		return nil, err
	}
	return &queueConn{pool: pool, broker: broker}, nil
}

func (q *queueConn) close() {
	_ = q.broker.Close() // closes the store
	q.pool.Close()
}

// enqueue adds n items to queue in one round trip.
func (q *queueConn) enqueue(ctx context.Context, queue string, n int) error {
	items := make([]claim.NewItem, n)
	for i := range items {
		items[i] = claim.NewItem{Queue: queue, Payload: []byte("image-" + strconv.Itoa(i+1))}
	}
	_, err := q.broker.EnqueueMany(ctx, items)
	return err
}

// drained reports whether queue holds nothing any more: every item was
// completed.
func (q *queueConn) drained(ctx context.Context, queue string) bool {
	c, err := q.broker.Counts(ctx, queue)
	return err == nil && c == claim.Counts{}
}
