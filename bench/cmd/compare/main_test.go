package main

import (
	"bytes"
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
	require.NoError(t, os.WriteFile(notes, []byte("## Method\n\nBy hand.\n"), 0o644))
	err := run([]string{"-runs", "2", "-out", dir, "-peers", "ttlcache,map+heap", "-notes", notes}, &stdout, &stderr)
	require.NoError(t, err, stderr.String())

	out := stdout.String()
	for _, want := range []string{"lease (ours)", "ttlcache v3", "map+heap", "1. grant + revoke", "7k.", "n/a", "medians of 2 runs", "goal"} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "etcd lessor  ", "etcd was not asked for")

	md, err := os.ReadFile(filepath.Join(dir, "benchmarks.md"))
	require.NoError(t, err)
	for _, want := range []string{"# Benchmarks", "## Machine", "## Results", "## Goals of issue 6", "benchmarks.svg", "ttlcache v3 ÷ ours", "## Method\n\nBy hand."} {
		assert.Contains(t, string(md), want)
	}
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
		{"-notes", "/nonexistent/notes.md"},
	} {
		tiny = true // should a case run after all, keep it short
		t.Cleanup(func() { tiny = false })
		var stdout, stderr bytes.Buffer
		assert.Error(t, run(args, &stdout, &stderr), "%q", args)
		assert.Empty(t, stdout.String(), "%q printed results", args)
	}
}
