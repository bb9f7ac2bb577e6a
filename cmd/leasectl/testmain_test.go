package main

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain refuses to run without a server rather than skipping: a CI run
// that silently tested nothing would look green.
func TestMain(m *testing.M) {
	if os.Getenv(testDSNEnv) == "" {
		fmt.Fprintf(os.Stderr, `FAIL: %s is not set, and these tests need a PostgreSQL server.
Run them against a throwaway server (started and removed for you), from cmd/:

	../scripts/with-postgres go test ./...

or point %s at a database where you may create and drop schemas.
`, testDSNEnv, testDSNEnv)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m)
}
