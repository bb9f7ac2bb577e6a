// Command replicated runs one node of a replicated lease service and serves
// a small JSON API over HTTP. Three of them make a cluster that keeps every
// lease and key when one node dies.
//
// # Running a cluster
//
// Start three nodes, each in its own terminal, with its own data directory:
//
//	peers=n1=127.0.0.1:7001,n2=127.0.0.1:7002,n3=127.0.0.1:7003
//	tls="-tls-ca ca.pem -tls-cert node.pem -tls-key node-key.pem"
//	go run . -id n1 -raft 127.0.0.1:7001 -http 127.0.0.1:8001 -dir /tmp/n1 -peers $peers $tls
//	go run . -id n2 -raft 127.0.0.1:7002 -http 127.0.0.1:8002 -dir /tmp/n2 -peers $peers $tls
//	go run . -id n3 -raft 127.0.0.1:7003 -http 127.0.0.1:8003 -dir /tmp/n3 -peers $peers $tls
//
// Raft traffic, and the calls a follower forwards to the leader, run on
// mutual TLS: -tls-ca is the cluster's CA (PEM), and -tls-cert and
// -tls-key are the node's certificate and key, which the CA signed for
// the host of the node's -raft address, for both server and client
// authentication. A node without a certificate from that CA cannot join,
// read or write. -insecure runs plain TCP instead, for a try on one
// machine; anyone who can reach the raft port then controls the cluster.
//
// -peers lists the raft members (ID=host:port of the raft transport); a node
// whose directory is empty bootstraps the cluster with them, and one that
// has state ignores the list. -peers-http maps the same IDs to their HTTP
// addresses, which GET /leader reports. It may be left out when every
// node's HTTP port is its raft port shifted by the same amount, as above
// (7001 to 8001): a peer missing from it is assumed to follow this node's
// shift.
//
// # The API
//
// Any node serves every call. Writes, and reads unless ?stale=1, are
// served by the leader: a follower forwards them to it over the raft
// port and answers with the leader's answer. With no leader elected in
// time a node answers 503, with a JSON body naming the leader it knows
// of, if any.
//
//	POST /grant   {"holder":"alice","ttl":"10s","key":"jobs/1","value":"..."}   key and value optional
//	POST /renew   {"id":7}
//	POST /revoke  {"id":7}
//	GET  /info?id=7
//	GET  /get?key=jobs/1        {"key":"jobs/1","value":"...","lease_id":7}, 404 when absent
//	GET  /leader                {"id":"n1","raft":"127.0.0.1:7001","http":"127.0.0.1:8001","self":"n2"}
//
// A lease is returned as {"id":7,"holder":"alice","purpose":"operation",
// "ttl":"10s","granted_at":...,"expires_at":...,"keys":["jobs/1"]}. Errors
// are {"error":"...","code":"LS_..."} with a status that fits the code:
// 400 for bad input, 404 for an unknown lease or key, 409 for a key held by
// another lease, 410 for a lease that has ended.
//
// Try it:
//
//	curl -s -d '{"holder":"alice","ttl":"30s","key":"jobs/1","value":"hello"}' 127.0.0.1:8002/grant
//	curl -s '127.0.0.1:8003/get?key=jobs/1'
//
// Kill the leader (its /leader shows "self" equal to "id") with kill -9: the
// others elect a new one within a few seconds, and the lease, its key and
// its deadline are all still there; the key disappears once the lease
// expires.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/replicated"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err == nil {
		err = run(ctx, cfg, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "replicated:", err)
		stop()
		os.Exit(1)
	}
}

// config is what one node is given.
type config struct {
	id        string
	raftAddr  string
	httpAddr  string
	dir       string
	peers     []replicated.Server
	peersHTTP map[string]string // raft ID -> HTTP address
	tls       *tls.Config       // nil with insecure
	insecure  bool
}

// parseFlags reads the command line. Bad input gets a *lease.Error naming
// the flag.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("replicated", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.id, "id", "", "this node's raft ID, one of -peers")
	fs.StringVar(&cfg.raftAddr, "raft", "", "host:port the raft transport listens on")
	fs.StringVar(&cfg.httpAddr, "http", "", "host:port the HTTP API listens on")
	fs.StringVar(&cfg.dir, "dir", "", "directory for this node's raft log and snapshots")
	peers := fs.String("peers", "", "the raft members: ID=host:port,...")
	peersHTTP := fs.String("peers-http", "", "the members' HTTP addresses: ID=host:port,... (default: each raft port shifted as this node's)")
	tlsCA := fs.String("tls-ca", "", "PEM file of the cluster's CA")
	tlsCert := fs.String("tls-cert", "", "PEM file of this node's certificate, signed by -tls-ca")
	tlsKey := fs.String("tls-key", "", "PEM file of this node's private key")
	fs.BoolVar(&cfg.insecure, "insecure", false, "plain TCP between nodes instead of mutual TLS")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, invalid("args", fmt.Sprintf("unexpected arguments %q", fs.Args()))
	}
	for _, f := range []struct{ name, value string }{{"id", cfg.id}, {"raft", cfg.raftAddr}, {"http", cfg.httpAddr}, {"dir", cfg.dir}} {
		if f.value == "" {
			return config{}, invalid(f.name, "-"+f.name+" is required")
		}
	}
	for _, f := range []struct{ name, value string }{{"raft", cfg.raftAddr}, {"http", cfg.httpAddr}} {
		if _, _, err := net.SplitHostPort(f.value); err != nil {
			return config{}, invalid(f.name, err.Error())
		}
	}
	var err error
	if cfg.tls, err = loadTLS(cfg.insecure, *tlsCA, *tlsCert, *tlsKey); err != nil {
		return config{}, err
	}
	list, err := parsePairs("peers", *peers)
	if err != nil {
		return config{}, err
	}
	for _, p := range list {
		cfg.peers = append(cfg.peers, replicated.Server{ID: p[0], Address: p[1]})
	}
	if !slices.ContainsFunc(cfg.peers, func(s replicated.Server) bool { return s.ID == cfg.id && s.Address == cfg.raftAddr }) {
		return config{}, invalid("peers", fmt.Sprintf("-peers must list this node as %s=%s", cfg.id, cfg.raftAddr))
	}
	list, err = parsePairs("peers-http", *peersHTTP)
	if err != nil {
		return config{}, err
	}
	cfg.peersHTTP = map[string]string{cfg.id: cfg.httpAddr}
	for _, p := range list {
		cfg.peersHTTP[p[0]] = p[1]
	}
	for _, p := range cfg.peers {
		if _, ok := cfg.peersHTTP[p.ID]; !ok {
			if addr, ok := shiftPort(p.Address, cfg.raftAddr, cfg.httpAddr); ok {
				cfg.peersHTTP[p.ID] = addr
			}
		}
	}
	return cfg, nil
}

// loadTLS reads the node's certificate and the cluster's CA, or returns nil
// for an explicitly insecure node.
func loadTLS(insecure bool, caFile, certFile, keyFile string) (*tls.Config, error) {
	if insecure {
		if caFile != "" || certFile != "" || keyFile != "" {
			return nil, invalid("insecure", "-insecure excludes -tls-ca, -tls-cert and -tls-key")
		}
		return nil, nil
	}
	for _, f := range []struct{ name, value string }{{"tls-ca", caFile}, {"tls-cert", certFile}, {"tls-key", keyFile}} {
		if f.value == "" {
			return nil, invalid(f.name, "-"+f.name+" is required, or -insecure for plain TCP")
		}
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, invalid("tls-cert", err.Error())
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, invalid("tls-ca", err.Error())
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, invalid("tls-ca", caFile+" holds no PEM certificate")
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool, MinVersion: tls.VersionTLS13}, nil
}

// shiftPort guesses a peer's HTTP address from its raft address: the same
// host, the port shifted as this node's raft port is to its HTTP port.
func shiftPort(peerRaft, raftAddr, httpAddr string) (string, bool) {
	port := func(addr string) (string, int, bool) {
		host, p, err := net.SplitHostPort(addr)
		n, aerr := strconv.Atoi(p)
		return host, n, err == nil && aerr == nil
	}
	host, peer, ok1 := port(peerRaft)
	_, r, ok2 := port(raftAddr)
	_, h, ok3 := port(httpAddr)
	shifted := peer + h - r
	if !ok1 || !ok2 || !ok3 || shifted < 1 || shifted > 65535 {
		return "", false
	}
	return net.JoinHostPort(host, strconv.Itoa(shifted)), true
}

// parsePairs parses ID=host:port,... with distinct IDs.
func parsePairs(field, s string) ([][2]string, error) {
	var out [][2]string
	if s == "" {
		if field == "peers" {
			return nil, invalid(field, "-peers is required")
		}
		return nil, nil
	}
	for item := range strings.SplitSeq(s, ",") {
		id, addr, ok := strings.Cut(item, "=")
		if !ok || id == "" {
			return nil, invalid(field, fmt.Sprintf("%q is not ID=host:port", item))
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, invalid(field, fmt.Sprintf("%q: %v", item, err))
		}
		if slices.ContainsFunc(out, func(p [2]string) bool { return p[0] == id }) {
			return nil, invalid(field, fmt.Sprintf("%q is listed twice", id))
		}
		out = append(out, [2]string{id, addr})
	}
	return out, nil
}

func invalid(field, why string) error {
	return &lease.Error{Code: lease.CodeInvalidArgument, Op: "flags", Field: field, Detail: why}
}

// run opens the node, serves the API until ctx ends, then stops both.
func run(ctx context.Context, cfg config, stdout io.Writer) error {
	node, err := replicated.Open(ctx, replicated.Config{
		ID:        cfg.id,
		Dir:       cfg.dir,
		Bind:      cfg.raftAddr,
		Bootstrap: cfg.peers,
		TLS:       cfg.tls,
		Insecure:  cfg.insecure,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.httpAddr)
	if err != nil {
		return errors.Join(err, node.Close())
	}
	srv := &http.Server{Handler: newAPI(node, cfg.id, cfg.peersHTTP), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "%s: raft on %s, HTTP on %s\n", cfg.id, cfg.raftAddr, ln.Addr())
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil {
		err = errors.Join(err, serr)
	}
	if err == nil {
		err = <-served
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, node.Close())
}
