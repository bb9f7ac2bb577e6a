package main

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the test binary as a worker when the example starts it as
// one, as the program itself does.
func TestMain(m *testing.M) {
	if name := os.Getenv(workerEnv); name != "" {
		os.Exit(workerMain(name))
	}
	goleak.VerifyTestMain(m)
}
