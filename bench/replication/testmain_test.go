package replication

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain looks for leaked goroutines once the tests have ended. etcd
// members, once closed, leave behind the HTTP keep-alive connections their
// peers opened to one another: the client ends idle in the peer round
// tripper, which Close does not close, and the server end waits in
// abortPendingRead, which cannot interrupt a read through etcd's connection
// multiplexer. Those goroutines, and only those, are ignored.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*connReader).abortPendingRead"),
		goleak.IgnoreAnyFunction("net/http.(*connReader).backgroundRead"),
	)
}
