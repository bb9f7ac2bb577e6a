package main

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the test binary as a candidate when the example starts it
// as one, as the program itself does.
func TestMain(m *testing.M) {
	if name := os.Getenv(candidateEnv); name != "" {
		os.Exit(candidateMain(name))
	}
	goleak.VerifyTestMain(m)
}
