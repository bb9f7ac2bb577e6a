package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/replicated"
)

// Errors get the status that fits them; a call no leader served gets 503,
// never a redirect: the node forwards to the leader itself.
func TestFailStatus(t *testing.T) {
	a := &api{self: "n2", httpOf: map[string]string{"n1": "127.0.0.1:8001", "n2": "127.0.0.1:8002"}}
	notLeader := func(id string) error {
		return fmt.Errorf("wrapped: %w", &replicated.NotLeaderError{Op: "grant", LeaderID: id, LeaderAddress: "raft"})
	}
	for _, c := range []struct {
		err      error
		status   int
		location string
		code     lease.Code
	}{
		{notLeader("n1"), http.StatusServiceUnavailable, "", ""},
		{notLeader(""), http.StatusServiceUnavailable, "", ""},
		{replicated.ErrNotLeader, http.StatusServiceUnavailable, "", ""},
		{&lease.Error{Code: lease.CodeInvalidArgument, Field: "ttl"}, http.StatusBadRequest, "", lease.CodeInvalidArgument},
		{&lease.Error{Code: lease.CodeNotFound}, http.StatusNotFound, "", lease.CodeNotFound},
		{&lease.Error{Code: lease.CodeKeyExists}, http.StatusConflict, "", lease.CodeKeyExists},
		{&lease.Error{Code: lease.CodeExpired}, http.StatusGone, "", lease.CodeExpired},
		{&lease.Error{Code: lease.CodeAlreadyRevoked}, http.StatusGone, "", lease.CodeAlreadyRevoked},
		{&lease.Error{Code: lease.CodeClosed}, http.StatusServiceUnavailable, "", lease.CodeClosed},
		{errors.New("disk on fire"), http.StatusInternalServerError, "", ""},
	} {
		w := httptest.NewRecorder()
		fail(w, httptest.NewRequest(http.MethodPost, "/grant?x=1", nil), a, c.err)
		assert.Equal(t, c.status, w.Code, "%v", c.err)
		assert.Equal(t, c.location, w.Header().Get("Location"), "%v", c.err)
		var body errorBody
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body), "%v", c.err)
		assert.Equal(t, c.code, body.Code, "%v", c.err)
		assert.NotEmpty(t, body.Error)
	}
}

// A body that is not the request's JSON is refused with 400.
func TestDecodeRefusesBadBodies(t *testing.T) {
	for _, body := range []string{`{`, `{"holder":"a","colour":"red"}`, `[1]`} {
		w := httptest.NewRecorder()
		var req grantRequest
		ok := decode(w, httptest.NewRequest(http.MethodPost, "/grant", strings.NewReader(body)), &req)
		assert.False(t, ok, body)
		assert.Equal(t, http.StatusBadRequest, w.Code, body)
	}
}
