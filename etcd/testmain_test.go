package etcd

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/goleak"
	"go.uber.org/zap"
)

// testClient talks to the etcd server that TestMain runs in this process
// for the whole test binary.
var testClient *clientv3.Client

// testEndpoint is the embedded server's client URL.
var testEndpoint string

// TestMain runs a real single-member etcd server on 127.0.0.1, runs the
// tests against it, closes client and server, and only then looks for
// leaked goroutines, so that etcd's own goroutines count as leaks only if
// they survive Close.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "lease-etcd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	srv, err := startServer(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: starting etcd:", err)
		return 1
	}
	testEndpoint = srv.Clients[0].Addr().String()
	testClient, err = clientv3.New(clientv3.Config{
		Endpoints:   []string{testEndpoint},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		srv.Close()
		fmt.Fprintln(os.Stderr, "FAIL: etcd client:", err)
		return 1
	}
	code := m.Run()
	testClient.Close()
	srv.Close()
	if code == 0 {
		if err := goleak.Find(leakOptions...); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: goleak:", err)
			return 1
		}
	}
	return code
}

// leakOptions are for goroutines that etcd leaves behind after Close:
// none so far, so nothing is ignored.
var leakOptions []goleak.Option

// startServer starts a single-member etcd server with its data in dir, on
// free ports of 127.0.0.1, and waits until it serves. Its election timeout
// is short so that its minimum lease TTL is 1 s (etcd's is 1.5 election
// timeouts, rounded up to whole seconds).
func startServer(dir string) (*embed.Etcd, error) {
	client, peer, err := freeURLs()
	if err != nil {
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Name = "test"
	cfg.Dir = dir
	cfg.ListenClientUrls = []url.URL{*client}
	cfg.AdvertiseClientUrls = []url.URL{*client}
	cfg.ListenPeerUrls = []url.URL{*peer}
	cfg.AdvertisePeerUrls = []url.URL{*peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	cfg.TickMs = 50
	cfg.ElectionMs = 500
	cfg.UnsafeNoFsync = true // a throwaway server: speed over durability
	cfg.LogLevel = "error"
	srv, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-srv.Server.ReadyNotify():
		return srv, nil
	case err := <-srv.Err():
		srv.Close()
		return nil, err
	case <-time.After(30 * time.Second):
		srv.Close()
		return nil, fmt.Errorf("not ready after 30 s")
	}
}

// freeURLs returns a client and a peer URL on two ports of 127.0.0.1 that
// were free a moment ago: the kernel picks them, both listeners open at once
// so that it cannot hand out one port twice, then closed for etcd to take.
func freeURLs() (client, peer *url.URL, err error) {
	first, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	defer first.Close()
	second, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	defer second.Close()
	return &url.URL{Scheme: "http", Host: first.Addr().String()},
		&url.URL{Scheme: "http", Host: second.Addr().String()}, nil
}

// newTestProvider returns a Provider on the test server whose keys live
// under a prefix of their own, so every test starts with no locks.
func newTestProvider(t *testing.T) *Provider {
	t.Helper()
	p, err := New(testClient, WithPrefix("test/"+t.Name()+"/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = testClient.Delete(ctx, p.prefix, clientv3.WithPrefix())
	})
	return p
}
