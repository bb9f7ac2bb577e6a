package replicated

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// The node's own transport: one TCP listener on Bind, mutual TLS unless
// Config.Insecure, that carries two kinds of connection, told apart by the
// first byte the dialler writes: raft's RPCs, handed to raft's network
// transport, and calls a follower forwards to the leader.
const (
	streamRaft    byte = 'R'
	streamForward byte = 'F'
)

// handshakeTimeout bounds how long an accepted connection may take to
// finish its TLS handshake and say what it carries.
const handshakeTimeout = 10 * time.Second

// streamLayer implements raft.StreamLayer on the node's listener.
type streamLayer struct {
	ln        net.Listener
	server    *tls.Config // nil when insecure
	client    *tls.Config // nil when insecure
	raftConns chan net.Conn
	forward   func(net.Conn) // serves one forwarded-call connection

	closing chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]struct{} // accepted connections not handed to raft
}

var errTransportClosed = errors.New("replicated: transport closed")

// listen opens the node's listener on bind. tlsConfig nil means plain TCP.
func listen(bind string, tlsConfig *tls.Config) (*streamLayer, error) {
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, err
	}
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok || addr.IP == nil || addr.IP.IsUnspecified() {
		_ = ln.Close()
		return nil, fmt.Errorf("replicated: %s is not an address other nodes can dial", bind)
	}
	s := &streamLayer{ln: ln, raftConns: make(chan net.Conn), closing: make(chan struct{}), conns: make(map[net.Conn]struct{})}
	if tlsConfig != nil {
		s.server, s.client = serverTLS(tlsConfig), tlsConfig.Clone()
	}
	return s, nil
}

// start accepts connections until close; forward serves forwarded calls.
func (s *streamLayer) start(forward func(net.Conn)) {
	s.forward = forward
	s.wg.Add(1)
	go s.acceptLoop()
}

// serverTLS is c for the listening side: peers must present a certificate
// the cluster's CA signed, whatever c's ClientAuth says.
func serverTLS(c *tls.Config) *tls.Config {
	s := c.Clone()
	mutual(s)
	if get := c.GetConfigForClient; get != nil {
		s.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			cc, err := get(hello)
			if err != nil || cc == nil {
				return cc, err
			}
			cc = cc.Clone()
			mutual(cc)
			return cc, nil
		}
	}
	return s
}

func mutual(c *tls.Config) {
	c.ClientAuth = tls.RequireAndVerifyClientCert
	if c.ClientCAs == nil {
		c.ClientCAs = c.RootCAs
	}
}

func (s *streamLayer) acceptLoop() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.closing:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			// A listener that fails otherwise is closed or broken: raft's
			// own accept loop sees the error from Accept once close runs.
			return
		}
		if !s.track(c) {
			_ = c.Close()
			return
		}
		s.wg.Add(1)
		go s.route(c)
	}
}

// track records c so that close can end it; false once closing.
func (s *streamLayer) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.closing:
		return false
	default:
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *streamLayer) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// route completes the handshake of an accepted connection and hands it to
// raft or to the forwarded-call server by its first byte.
func (s *streamLayer) route(raw net.Conn) {
	defer s.wg.Done()
	conn := raw
	if s.server != nil {
		conn = tls.Server(raw, s.server)
	}
	_ = raw.SetDeadline(time.Now().Add(handshakeTimeout))
	var kind [1]byte
	if _, err := conn.Read(kind[:]); err != nil { // a TLS handshake failure ends here
		s.untrack(raw)
		_ = conn.Close()
		return
	}
	_ = raw.SetDeadline(time.Time{})
	switch kind[0] {
	case streamRaft:
		s.untrack(raw) // raft owns it now, and closes it
		select {
		case s.raftConns <- conn:
		case <-s.closing:
			_ = conn.Close()
		}
	case streamForward:
		s.forward(conn)
		s.untrack(raw)
		_ = conn.Close()
	default:
		s.untrack(raw)
		_ = conn.Close()
	}
}

// Accept implements net.Listener for raft: the next raft connection.
func (s *streamLayer) Accept() (net.Conn, error) {
	select {
	case c := <-s.raftConns:
		return c, nil
	case <-s.closing:
		return nil, errTransportClosed
	}
}

// Close implements net.Listener: it stops accepting, ends every connection
// not handed to raft, and waits for the goroutines it started.
func (s *streamLayer) Close() error {
	var err error
	s.once.Do(func() {
		s.mu.Lock()
		close(s.closing)
		for c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
		err = s.ln.Close()
		s.wg.Wait()
		s.forward = nil // raft's transport may still hold s a moment: not the node
	})
	return err
}

// Addr implements net.Listener.
func (s *streamLayer) Addr() net.Addr { return s.ln.Addr() }

// Dial implements raft.StreamLayer.
func (s *streamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return s.dial(context.Background(), string(address), streamRaft, timeout)
}

// dial connects to a node's listener for the given kind of stream, until
// timeout passes or ctx ends.
func (s *streamLayer) dial(ctx context.Context, address string, kind byte, timeout time.Duration) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	var (
		conn net.Conn
		err  error
	)
	if s.client != nil {
		cfg := s.client
		if cfg.ServerName == "" {
			host, _, herr := net.SplitHostPort(address)
			if herr != nil {
				return nil, herr
			}
			cfg = cfg.Clone()
			cfg.ServerName = host
		}
		conn, err = (&tls.Dialer{NetDialer: d, Config: cfg}).DialContext(ctx, "tcp", address)
	} else {
		conn, err = d.DialContext(ctx, "tcp", address)
	}
	if err != nil {
		return nil, err
	}
	_ = conn.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := conn.Write([]byte{kind}); err != nil {
		_ = conn.Close()
		return nil, err
	}
	_ = conn.SetWriteDeadline(time.Time{})
	return conn, nil
}
