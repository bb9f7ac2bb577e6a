package bench

import _ "embed"

// Notes is the hand-written part of docs/benchmarks.md: method, choices
// and findings. It lives in notes.md next to the generator.
//
//go:embed notes.md
var Notes string
