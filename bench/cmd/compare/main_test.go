package main

import (
	"bytes"
	"github.com/leasehold/lease/bench"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSmoke runs the whole command at tiny sizes (etcd left out: its 2 s
// minimum TTL is covered by the bench package's tests) and checks what it
// prints and writes.
func TestSmoke(t *testing.T) {
	tiny = true
	t.Cleanup(func() { tiny = false })
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	notes := filepath.Join(dir, "notes.md")
	require.NoError(t, os.WriteFile(notes, []byte("Peers table.\n"+bench.IntroEnd+"\n## Method\n\nBy hand.\n"), 0o644))
	err := run([]string{"-runs", "2", "-out", dir, "-peers", "ttlcache,map+heap", "-notes", notes}, &stdout, &stderr)
	require.NoError(t, err, stderr.String())

	out := stdout.String()
	for _, want := range []string{"lease (ours)", "ttlcache v3", "map+heap", "1. grant + revoke", "7k.", "n/a", "medians of 2 runs", "goal"} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "etcd lessor  ", "etcd was not asked for")

	md, err := os.ReadFile(filepath.Join(dir, "benchmarks.md"))
	require.NoError(t, err)
	for _, want := range []string{"# Benchmarks", "## Machine", "## Results", "For anyone", "Peers table.\n\nMeasured with", "benchmarks.svg", "ttlcache v3 ÷ ours", "## Method\n\nBy hand."} {
		assert.Contains(t, string(md), want)
	}
	assert.NotContains(t, string(md), "## Goals", "the page states results, not verdicts")
	svg, err := os.ReadFile(filepath.Join(dir, "benchmarks.svg"))
	require.NoError(t, err)
	assert.Contains(t, string(svg), "<svg")
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-runs", "-1"},
		{"-peers", "zookeeper"},
		{"extra"},
		{"-nope"},
		{"-out", t.TempDir(), "-notes", "/nonexistent/notes.md"},
	} {
		tiny = true // should a case run after all, keep it short
		t.Cleanup(func() { tiny = false })
		var stdout, stderr bytes.Buffer
		assert.Error(t, run(args, &stdout, &stderr), "%q", args)
		assert.Empty(t, stdout.String(), "%q printed results", args)
	}
}

// TestWritesNothingWithoutOut runs the command as `go run ./cmd/compare
// -quick` runs in bench/, next to the committed docs/benchmarks.md, and
// checks that it prints the table and writes nothing.
func TestWritesNothingWithoutOut(t *testing.T) {
	tiny = true
	t.Cleanup(func() { tiny = false })
	root := t.TempDir()
	docs, benchDir := filepath.Join(root, "docs"), filepath.Join(root, "bench")
	require.NoError(t, os.Mkdir(docs, 0o755))
	require.NoError(t, os.Mkdir(benchDir, 0o755))
	committed := []byte("# Benchmarks: the committed report\n")
	require.NoError(t, os.WriteFile(filepath.Join(docs, "benchmarks.md"), committed, 0o644))
	t.Chdir(benchDir)

	var stdout, stderr bytes.Buffer
	require.NoError(t, run([]string{"-quick", "-peers", "map+heap"}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "lease (ours)")

	md, err := os.ReadFile(filepath.Join(docs, "benchmarks.md"))
	require.NoError(t, err)
	assert.Equal(t, string(committed), string(md))
	for _, dir := range []string{docs, benchDir} {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		assert.Subset(t, []string{"benchmarks.md"}, names, "files in %s", dir)
	}
}
