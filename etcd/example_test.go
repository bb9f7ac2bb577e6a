package etcd_test

import (
	"context"
	"fmt"
	"log"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/leasehold/lease/etcd"
	"github.com/leasehold/lease/lock"
)

// Example runs a function under a lock kept in etcd, with lock.Manager
// renewing the lease while it runs and releasing it when it returns.
func Example() {
	endpoints := []string{etcd.ServerEndpoint()} // your cluster's client URLs
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, Logger: zap.NewNop()})
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()
	p, err := etcd.New(cli, etcd.WithPrefix("example/locks/"))
	if err != nil {
		log.Fatal(err)
	}
	m, err := lock.NewManager(p, lock.WithLeaseDuration(5*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	acquired, err := m.TryLock(context.Background(), "reports/daily", func(ctx context.Context, l lock.Lease) error {
		fmt.Println("generating the report under fencing token > 0:", l.Token > 0)
		return nil
	})
	fmt.Println(acquired, err)
	// Output:
	// generating the report under fencing token > 0: true
	// true <nil>
}
