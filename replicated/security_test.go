package replicated

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// Open refuses a node transport that is neither TLS nor explicitly
// insecure, and security settings it cannot honour, naming the field.
func TestOpenRefusesUnsecuredTransport(t *testing.T) {
	ca := clusterCA()
	_, tr := raft.NewInmemTransport("")
	defer func() { _ = tr.Close() }()
	good := Config{ID: "a", Dir: t.TempDir(), Bind: "127.0.0.1:0", TLS: ca.config(t, "a")}
	for _, tt := range []struct {
		field string
		edit  func(*Config)
	}{
		{"TLS", func(c *Config) { c.TLS = nil }},
		{"Insecure", func(c *Config) { c.Insecure = true }},
		{"TLS", func(c *Config) { c.Transport = tr }},
		{"Insecure", func(c *Config) { c.TLS, c.Insecure, c.Transport = nil, true, tr }},
		{"TLS.InsecureSkipVerify", func(c *Config) { c.TLS = c.TLS.Clone(); c.TLS.InsecureSkipVerify = true }},
		{"TLS.Certificates", func(c *Config) { c.TLS = &tls.Config{RootCAs: ca.pool} }},
		{"TLS.GetClientCertificate", func(c *Config) {
			cert := ca.leaf(t, "a")
			c.TLS = &tls.Config{RootCAs: ca.pool, GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &cert, nil }}
		}},
		{"TLS.RootCAs", func(c *Config) { c.TLS = &tls.Config{Certificates: []tls.Certificate{ca.leaf(t, "a")}} }},
	} {
		t.Run(tt.field, func(t *testing.T) {
			cfg := good
			tt.edit(&cfg)
			n, err := Open(context.Background(), cfg)
			require.Nil(t, n)
			var le *lease.Error
			require.ErrorAs(t, err, &le)
			assert.Equal(t, lease.CodeInvalidArgument, le.Code)
			assert.Equal(t, tt.field, le.Field)
		})
	}
}

// A node without a certificate from the cluster's CA, or with none at all,
// can neither join the cluster nor read or change it: its connections are
// refused during the TLS handshake, and the cluster carries on.
func TestTLSShutsOutStrangers(t *testing.T) {
	c := newCluster(t, clusterOpts{transport: tcpTransport, raft: patientRaft})
	ctx := ctxT(t)
	li := c.leader()
	ldr := c.nodes[li]
	l, err := ldr.GrantWithKey(ctx, "h", lease.Operation, time.Minute, "secret", []byte("v"))
	require.NoError(t, err)
	members := c.cfgs[0].Bootstrap

	strangers := map[string]func(*Config){
		"other CA": func(cfg *Config) { cfg.TLS = newTestCA(t, "other CA").config(t, cfg.ID) },
		"plain":    func(cfg *Config) { cfg.Insecure = true },
	}
	var outsiders []*Node
	for name, secure := range strangers {
		id := "stranger-" + name
		cfg := Config{ID: id, Dir: t.TempDir(), Bind: freeAddr(t), Raft: testRaftConfig()}
		patientRaft(cfg.Raft)
		secure(&cfg)
		cfg.Bootstrap = append(append([]Server(nil), members...), Server{ID: id, Address: cfg.Bind})
		n, err := Open(ctx, cfg)
		require.NoError(t, err)
		t.Cleanup(func() { _ = n.Close() })
		// The leader even admits it as a voter: it still gets nothing.
		require.NoError(t, ldr.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(cfg.Bind), 0, 0).Error())
		outsiders = append(outsiders, n)
	}
	// The cluster commits on: two of five voters are strangers.
	_, err = ldr.Renew(ctx, l.ID)
	require.NoError(t, err)
	require.Never(t, func() bool {
		for _, n := range outsiders {
			if list, _ := n.Stale().List(ctx); len(list) > 0 {
				return true
			}
			if _, _, ok, _ := n.Stale().Get(ctx, "secret"); ok {
				return true
			}
		}
		return false
	}, time.Second, 50*time.Millisecond, "a stranger read the cluster's state")
	for _, n := range outsiders {
		// A stranger never learns a leader to forward to: bound its wait.
		ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, err := n.Grant(ctx, "x", lease.Operation, time.Minute)
		require.Error(t, err, "a stranger cannot write")
		_, err = n.Revoke(ctx, l.ID)
		require.Error(t, err, "a stranger cannot revoke")
		_, err = n.Info(ctx, l.ID)
		require.Error(t, err, "a stranger cannot read linearizably")
	}
	got, err := c.nodes[c.leader()].Info(ctx, l.ID)
	require.NoError(t, err, "the lease is untouched")
	require.Equal(t, l.ID, got.ID)
}

// A raft RPC from a transport without the cluster's certificate fails, and
// so does a forwarded call: the node closes the connection without an
// answer.
func TestTLSRefusesForeignRPCs(t *testing.T) {
	c := newCluster(t, clusterOpts{transport: tcpTransport, raft: patientRaft})
	li := c.leader()
	target := raft.ServerAddress(c.cfgs[li].Bind)
	vote := &raft.RequestVoteRequest{RPCHeader: raft.RPCHeader{ID: []byte("x"), Addr: []byte("x"), ProtocolVersion: raft.ProtocolVersionMax}, Term: 1 << 40}

	plain, err := raft.NewTCPTransportWithLogger("127.0.0.1:0", nil, 1, time.Second, hclog.NewNullLogger())
	require.NoError(t, err)
	defer func() { _ = plain.Close() }()
	require.Error(t, plain.RequestVote("n0", target, vote, &raft.RequestVoteResponse{}), "plain TCP")

	foreign, err := listen("127.0.0.1:0", newTestCA(t, "other CA").config(t, "x"))
	require.NoError(t, err)
	defer func() { _ = foreign.Close() }()
	tr := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: foreign, MaxPool: 1, Timeout: time.Second, Logger: hclog.NewNullLogger()})
	defer func() { _ = tr.Close() }()
	require.Error(t, tr.RequestVote("n0", target, vote, &raft.RequestVoteResponse{}), "another CA's certificate")

	for _, kind := range []byte{streamRaft, streamForward} {
		conn, err := foreign.dial(context.Background(), string(target), kind, time.Second)
		if err == nil { // TLS 1.3: the server's refusal arrives on the first read
			_ = conn.SetReadDeadline(time.Now().Add(waitLimit))
			_, err = io.ReadAll(conn)
			if err == nil {
				err = io.EOF
			}
			_ = conn.Close()
		}
		require.Error(t, err)
	}
	require.Equal(t, li, c.leader(), "the cluster kept its leader")
}

// A node whose certificate comes from GetCertificate and
// GetClientCertificate rotates it without a restart: connections made
// after the rotation present the new certificate.
func TestTLSCertificateRotation(t *testing.T) {
	ca := clusterCA()
	var current atomic.Pointer[tls.Certificate]
	first := ca.leaf(t, "n0")
	current.Store(&first)
	c := newCluster(t, clusterOpts{transport: tcpTransport, raft: patientRaft})
	// Node n0 again, on callbacks.
	c.stop(0)
	c.cfgs[0].TLS = &tls.Config{
		RootCAs:              ca.pool,
		MinVersion:           tls.VersionTLS13,
		GetCertificate:       func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return current.Load(), nil },
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return current.Load(), nil },
	}
	c.start(0)
	ctx := ctxT(t)
	require.NoError(t, c.nodes[0].Ready(ctx))

	// A newcomer records the certificates its peers present.
	var seen sync.Map // serial -> true
	rc := testRaftConfig()
	patientRaft(rc)
	bind := freeAddr(t)
	cfg := Config{ID: "n3", Dir: t.TempDir(), Bind: bind, Raft: rc, TLS: ca.config(t, "n3")}
	cfg.TLS.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) > 0 {
			seen.Store(cs.PeerCertificates[0].SerialNumber.String(), true)
		}
		return nil
	}
	newcomer, err := Open(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = newcomer.Close() })

	second := ca.leaf(t, "n0")
	current.Store(&second) // rotated: no restart
	serial := func(c *tls.Certificate) string {
		x, err := x509.ParseCertificate(c.Certificate[0])
		require.NoError(t, err)
		return x.SerialNumber.String()
	}
	// Make n0 dial the newcomer: lead, and add it.
	if c.leader() != 0 {
		require.NoError(t, c.nodes[c.leader()].TransferLeadership(ctx, "n0"))
		require.Eventually(t, func() bool { return c.leading() == 0 }, waitLimit, time.Millisecond)
	}
	require.NoError(t, c.nodes[0].AddVoter(ctx, "n3", bind))
	require.Eventually(t, func() bool { _, ok := seen.Load(serial(&second)); return ok }, waitLimit, time.Millisecond,
		"the newcomer saw the rotated certificate")
	_, ok := seen.Load(serial(&first))
	require.False(t, ok, "no connection made after the rotation presents the old certificate")
	_, err = c.nodes[0].Grant(ctx, "h", lease.Operation, time.Minute)
	require.NoError(t, err, "the cluster works on")
}
