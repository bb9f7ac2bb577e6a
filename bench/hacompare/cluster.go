package hacompare

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/leasehold/lease/replicated"
)

// clusterSize is the number of nodes of every cluster here.
const clusterSize = 3

// pki is a throwaway certificate authority that issues each node a
// certificate for 127.0.0.1, for both ends of a connection.
type pki struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newPKI() (*pki, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "hacompare CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(7 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &pki{cert: cert, key: key, pool: pool}, nil
}

// config is the TLS configuration of the node named name: its own
// certificate, and the CA that verifies its peers.
func (p *pki) config(name string, serial int64) (*tls.Config, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.cert, &key.PublicKey, p.key)
	if err != nil {
		return nil, err
	}
	leaf := tls.Certificate{Certificate: [][]byte{der, p.cert.Raw}, PrivateKey: key}
	return &tls.Config{Certificates: []tls.Certificate{leaf}, RootCAs: p.pool, MinVersion: tls.VersionTLS13}, nil
}

// ClusterConfig is how a cluster's nodes are set up. It is a plain value.
type ClusterConfig struct {
	// TLS secures the nodes' transports with mutual TLS (certificates of
	// a throwaway CA); without it they run on plain TCP (Insecure).
	TLS bool
	// Dir is where the nodes' directories go; default os.TempDir().
	Dir string
}

// cluster is three replicated nodes in this process, each on its own
// TCP transport on 127.0.0.1 and its own directory, with raft's default
// (LAN) timeouts and its fsyncs on.
type cluster struct {
	dir   string
	cfgs  []replicated.Config
	mu    sync.Mutex
	nodes []*replicated.Node // nil where a node is down
}

// freeAddrs returns n distinct TCP addresses on 127.0.0.1 that were free a
// moment ago. The listeners stay open until all n are picked, since the
// kernel often hands a just-closed port to the next listener.
func freeAddrs(n int) (addrs []string, err error) {
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer func() { err = errors.Join(err, l.Close()) }()
		addrs = append(addrs, l.Addr().String())
	}
	return addrs, nil
}

// startCluster opens three nodes that bootstrap one cluster, and waits
// until every node serves (a leader is elected and known to all).
func startCluster(ctx context.Context, cc ClusterConfig) (c *cluster, err error) {
	dir, err := os.MkdirTemp(cc.Dir, "hacompare-")
	if err != nil {
		return nil, err
	}
	c = &cluster{dir: dir, nodes: make([]*replicated.Node, clusterSize)}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.close())
		}
	}()
	var p *pki
	if cc.TLS {
		if p, err = newPKI(); err != nil {
			return c, err
		}
	}
	binds, err := freeAddrs(clusterSize)
	if err != nil {
		return c, err
	}
	var servers []replicated.Server
	for i := range clusterSize {
		id := fmt.Sprintf("node%d", i)
		bind := binds[i]
		rc := raft.DefaultConfig()
		rc.Logger = hclog.NewNullLogger()
		cfg := replicated.Config{ID: id, Dir: filepath.Join(dir, id), Bind: bind, Raft: rc}
		if p != nil {
			if cfg.TLS, err = p.config(id, int64(i+2)); err != nil {
				return c, err
			}
		} else {
			cfg.Insecure = true
		}
		servers = append(servers, replicated.Server{ID: id, Address: bind})
		c.cfgs = append(c.cfgs, cfg)
	}
	for i := range c.cfgs {
		c.cfgs[i].Bootstrap = servers
		if err := c.start(ctx, i); err != nil {
			return c, err
		}
	}
	return c, c.ready(ctx)
}

// start opens node i, again if it ran before: on its directory, it
// restores the latest snapshot and its log.
func (c *cluster) start(ctx context.Context, i int) error {
	n, err := replicated.Open(ctx, c.cfgs[i])
	if err != nil {
		return fmt.Errorf("open %s: %w", c.cfgs[i].ID, err)
	}
	c.mu.Lock()
	c.nodes[i] = n
	c.mu.Unlock()
	return nil
}

// ready waits until every running node serves.
func (c *cluster) ready(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for i, n := range c.running() {
		if n == nil {
			continue
		}
		if err := n.Ready(rctx); err != nil {
			return fmt.Errorf("%s ready: %w", c.cfgs[i].ID, err)
		}
	}
	return nil
}

// running returns the nodes, nil where one is down.
func (c *cluster) running() []*replicated.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*replicated.Node(nil), c.nodes...)
}

// leader returns the index of the running node other than except that
// leads and serves, waiting for one; except -1 excepts none.
func (c *cluster) leader(ctx context.Context, except int) (int, error) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		for i, n := range c.running() {
			if n != nil && i != except && n.Raft().State() == raft.Leader && n.Status().Serving {
				return i, nil
			}
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("no leader: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// stop closes node i.
func (c *cluster) stop(i int) error {
	c.mu.Lock()
	n := c.nodes[i]
	c.nodes[i] = nil
	c.mu.Unlock()
	if n == nil {
		return nil
	}
	return n.Close()
}

// close closes every running node and removes the directories.
func (c *cluster) close() error {
	var errs []error
	for i := range c.cfgs {
		errs = append(errs, c.stop(i))
	}
	errs = append(errs, os.RemoveAll(c.dir))
	return errors.Join(errs...)
}
