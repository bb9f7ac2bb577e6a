package pgcompare

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

const dsnEnv = "LEASE_POSTGRES_DSN"

// TestMain refuses to run without a server rather than skipping, like the
// postgres module's.
func TestMain(m *testing.M) {
	if os.Getenv(dsnEnv) == "" {
		fmt.Fprintf(os.Stderr, `FAIL: %s is not set, and this comparison needs a PostgreSQL server.
Run it against a throwaway server, from bench/pgcompare/:

	../../scripts/with-postgres go test -run . -bench . -benchmem ./...
`, dsnEnv)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m)
}
