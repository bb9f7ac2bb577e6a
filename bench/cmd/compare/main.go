// Command compare runs every benchmark scenario against lease and its peers
// and prints a table of medians with ratios against lease. Asked to, with
// -out, it also writes the report as benchmarks.md with an SVG chart,
// benchmarks.svg; the committed docs/benchmarks.md is such a report of a
// full run, and only a run with -out ../docs replaces it.
//
// Usage, from the bench directory:
//
//	go run ./cmd/compare                 # the full run, 5 runs per scenario; prints the table
//	go run ./cmd/compare -quick          # smaller sizes, 1 run, under a minute; prints the table
//	go run ./cmd/compare -out ../docs    # the full run, and rewrite docs/benchmarks.md and .svg
//
// Flags:
//
//	-quick        smaller sizes and one run, for smoke checks
//	-runs N       runs per scenario and peer; medians are reported (default 5, 1 with -quick)
//	-out DIR      write benchmarks.md and benchmarks.svg into DIR (default: write nothing)
//	-peers LIST   comma-separated peers to run: lease,etcd,ttlcache,map+heap,timers (default all; lease always runs)
//	-notes FILE   hand-written Markdown appended to the report, read when the run ends (default notes.md; only with -out)
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/leasehold/lease/bench"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(2)
	}
}

// tiny is a hidden configuration for the command's own test.
var tiny bool

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quick := fs.Bool("quick", false, "smaller sizes and one run, for smoke checks")
	runs := fs.Int("runs", 0, "runs per scenario and peer (default 5, 1 with -quick)")
	out := fs.String("out", "", "directory to write benchmarks.md and benchmarks.svg into (default: write nothing)")
	notes := fs.String("notes", "notes.md", "hand-written Markdown appended to the report, read when the run ends")
	peerList := fs.String("peers", "", "comma-separated peers: lease,etcd,ttlcache,map+heap,timers,timer-loop (default all)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	cfg, command := bench.Full(), "go run ./cmd/compare"
	if *quick {
		cfg, command = bench.Quick(), command+" -quick"
	}
	if tiny {
		cfg = bench.Tiny()
	}
	switch {
	case *runs < 0:
		return fmt.Errorf("-runs %d: must be at least 1", *runs)
	case *runs == 0 && *quick:
		*runs = 1
	case *runs == 0:
		*runs = 5
	default:
		command += fmt.Sprintf(" -runs %d", *runs)
	}
	peers, err := choosePeers(*peerList)
	if err != nil {
		return err
	}
	if _, err := os.Stat(*notes); *out != "" && err != nil {
		return fmt.Errorf("-notes: %w", err) // fail now, not after the run
	}
	if *peerList != "" {
		command += " -peers " + *peerList
	}

	machine := bench.ThisMachine()
	fmt.Fprintf(stderr, "%s: %s, %s, %d cores, load %s\n", command, machine.GoVersion, machine.CPU, machine.Cores, machine.LoadStart)
	report := bench.Run(cfg, *runs, peers, stderr)
	machine.LoadEnd = bench.LoadAverage()
	if err := report.WriteText(stdout); err != nil {
		return err
	}
	if *out == "" {
		return nil
	}
	text, err := os.ReadFile(*notes)
	if err != nil {
		return fmt.Errorf("-notes: %w", err)
	}
	return write(*out, report, machine, command, string(text))
}

func choosePeers(list string) ([]bench.Peer, error) {
	all := bench.Peers()
	if list == "" {
		return all, nil
	}
	want := strings.Split(list, ",")
	var keys []string
	for _, p := range all {
		keys = append(keys, p.Key)
	}
	for _, w := range want {
		if !slices.Contains(keys, w) {
			return nil, fmt.Errorf("-peers: unknown peer %q (have %s)", w, strings.Join(keys, ", "))
		}
	}
	peers := all[:1] // ours, the reference for every ratio
	for _, p := range all[1:] {
		if slices.Contains(want, p.Key) {
			peers = append(peers, p)
		}
	}
	return peers, nil
}

func write(dir string, r *bench.Report, m bench.Machine, command, notes string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	const md, svg = "benchmarks.md", "benchmarks.svg"
	var errs []error
	err := writeFile(filepath.Join(dir, svg), r.WriteSVG)
	chart := svg
	if err != nil {
		errs = append(errs, fmt.Errorf("chart: %w", err))
		chart = ""
	}
	errs = append(errs, writeFile(filepath.Join(dir, md), func(w io.Writer) error {
		return r.WriteMarkdown(w, m, command, chart, notes)
	}))
	return errors.Join(errs...)
}

// writeFile writes path through a temporary file, so a failed run leaves
// the previous report in place.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
