package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/replicated"
)

// maxBody bounds a request body.
const maxBody = 1 << 20

// api serves the HTTP API of one node. It is safe for concurrent use: its
// fields are set once, and the node is safe for concurrent use.
type api struct {
	node   *replicated.Node
	self   string
	httpOf map[string]string // raft ID -> HTTP address; read-only
}

func newAPI(node *replicated.Node, self string, httpOf map[string]string) http.Handler {
	a := &api{node: node, self: self, httpOf: httpOf}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /grant", a.grant)
	mux.HandleFunc("POST /renew", a.renew)
	mux.HandleFunc("POST /revoke", a.revoke)
	mux.HandleFunc("GET /info", a.info)
	mux.HandleFunc("GET /get", a.get)
	mux.HandleFunc("GET /leader", a.leader)
	return mux
}

// leaseJSON is a lease as the API shows it.
type leaseJSON struct {
	ID        lease.ID  `json:"id"`
	Holder    string    `json:"holder"`
	Purpose   string    `json:"purpose"`
	TTL       string    `json:"ttl"`
	GrantedAt time.Time `json:"granted_at"`
	RenewedAt time.Time `json:"renewed_at"`
	ExpiresAt time.Time `json:"expires_at"`
	Keys      []string  `json:"keys,omitempty"`
}

func toJSON(l lease.Lease) leaseJSON {
	return leaseJSON{
		ID: l.ID, Holder: l.Holder, Purpose: l.Purpose.String(), TTL: l.TTL.String(),
		GrantedAt: l.GrantedAt, RenewedAt: l.RenewedAt, ExpiresAt: l.ExpiresAt, Keys: l.Keys,
	}
}

// grantRequest is the body of POST /grant.
type grantRequest struct {
	Holder  string `json:"holder"`
	Purpose string `json:"purpose"` // default "operation"
	TTL     string `json:"ttl"`     // a Go duration: "10s"
	Key     string `json:"key"`     // optional
	Value   string `json:"value"`
}

// idRequest is the body of POST /renew and POST /revoke.
type idRequest struct {
	ID lease.ID `json:"id"`
}

func (a *api) grant(w http.ResponseWriter, r *http.Request) {
	var req grantRequest
	if !decode(w, r, &req) {
		return
	}
	ttl, err := time.ParseDuration(req.TTL)
	if err != nil {
		fail(w, r, a, invalid("ttl", err.Error()))
		return
	}
	purpose := lease.Operation
	if req.Purpose != "" {
		if purpose, err = lease.ParsePurpose(req.Purpose); err != nil {
			fail(w, r, a, err)
			return
		}
	}
	var l lease.Lease
	if req.Key == "" {
		l, err = a.node.Grant(r.Context(), req.Holder, purpose, ttl)
	} else {
		l, err = a.node.GrantWithKey(r.Context(), req.Holder, purpose, ttl, req.Key, []byte(req.Value))
	}
	respond(w, r, a, l, err)
}

func (a *api) renew(w http.ResponseWriter, r *http.Request) {
	var req idRequest
	if decode(w, r, &req) {
		l, err := a.node.Renew(r.Context(), req.ID)
		respond(w, r, a, l, err)
	}
}

func (a *api) revoke(w http.ResponseWriter, r *http.Request) {
	var req idRequest
	if decode(w, r, &req) {
		l, err := a.node.Revoke(r.Context(), req.ID)
		respond(w, r, a, l, err)
	}
}

func (a *api) info(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseUint(r.URL.Query().Get("id"), 10, 64)
	if err != nil {
		fail(w, r, a, invalid("id", err.Error()))
		return
	}
	l, err := a.reads(r).Info(r.Context(), lease.ID(id))
	respond(w, r, a, l, err)
}

func (a *api) get(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	value, id, ok, err := a.reads(r).Get(r.Context(), key)
	switch {
	case err != nil:
		fail(w, r, a, err)
	case !ok:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such key", "key": key})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"key": key, "value": string(value), "lease_id": id})
	}
}

func (a *api) leader(w http.ResponseWriter, _ *http.Request) {
	id, addr := a.node.Leader()
	writeJSON(w, http.StatusOK, map[string]string{"id": id, "raft": addr, "http": a.httpOf[id], "self": a.self})
}

// reader is what the read handlers need of a node.
type reader interface {
	Info(ctx context.Context, id lease.ID) (lease.Lease, error)
	Get(ctx context.Context, key string) (value []byte, id lease.ID, ok bool, err error)
}

// reads serves a read from this node's own state with ?stale=1, and
// linearizably otherwise.
func (a *api) reads(r *http.Request) reader {
	if r.URL.Query().Get("stale") == "1" {
		return a.node.Stale()
	}
	return a.node
}

// decode reads the JSON body into v, or answers 400 and returns false.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody{Error: "body: " + err.Error(), Code: lease.CodeInvalidArgument})
		return false
	}
	return true
}

func respond(w http.ResponseWriter, r *http.Request, a *api, l lease.Lease, err error) {
	if err != nil {
		fail(w, r, a, err)
		return
	}
	writeJSON(w, http.StatusOK, toJSON(l))
}

// errorBody is the body of every error answer.
type errorBody struct {
	Error      string     `json:"error"`
	Code       lease.Code `json:"code,omitempty"`
	LeaderID   string     `json:"leader_id,omitempty"`
	LeaderHTTP string     `json:"leader_http,omitempty"`
}

// fail answers err: a call no leader could serve in time gets 503 naming
// the leader this node knows of, and lease errors get a status that fits
// their code.
func fail(w http.ResponseWriter, _ *http.Request, a *api, err error) {
	var nl *replicated.NotLeaderError
	if errors.As(err, &nl) {
		writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: err.Error(), LeaderID: nl.LeaderID, LeaderHTTP: a.httpOf[nl.LeaderID]})
		return
	}
	if errors.Is(err, replicated.ErrNotLeader) {
		writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: err.Error()})
		return
	}
	status := http.StatusInternalServerError
	var le *lease.Error
	if errors.As(err, &le) {
		switch le.Code {
		case lease.CodeInvalidArgument:
			status = http.StatusBadRequest
		case lease.CodeNotFound:
			status = http.StatusNotFound
		case lease.CodeKeyExists, lease.CodePurposeMismatch:
			status = http.StatusConflict
		case lease.CodeExpired, lease.CodeStaleUse, lease.CodeAlreadyRevoked:
			status = http.StatusGone
		case lease.CodeClosed:
			status = http.StatusServiceUnavailable
		}
		writeJSON(w, status, errorBody{Error: err.Error(), Code: le.Code})
		return
	}
	writeJSON(w, status, errorBody{Error: err.Error()})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, fmt.Appendf(nil, `{"error":%q}`, err.Error())
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
