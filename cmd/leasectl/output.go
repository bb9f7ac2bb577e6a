package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"
)

// writeTable writes header and rows as columns aligned by tabwriter.
func writeTable(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// writeFields writes label and value pairs, the values aligned.
func writeFields(w io.Writer, fields [][2]string) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, f := range fields {
		fmt.Fprintf(tw, "%s:\t%s\n", f[0], f[1])
	}
	return tw.Flush()
}

// writeJSON writes v as indented JSON and a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write the output: %w", err)
	}
	return nil
}

// timeText formats t for text output: RFC 3339 in UTC, "-" for the zero
// time.
func timeText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// timeJSON is t for JSON output: nil (omitted) for the zero time.
func timeJSON(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// bytesText formats b for text output: as it is when it is printable
// UTF-8, else "base64:" and its standard base64; "-" when empty.
func bytesText(b []byte) string {
	switch {
	case len(b) == 0:
		return "-"
	case printable(b):
		return string(b)
	}
	return "base64:" + base64.StdEncoding.EncodeToString(b)
}

// printable reports whether b is UTF-8 text without control characters,
// tabs and newlines aside.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if unicode.IsControl(r) && r != '\t' && r != '\n' {
			return false
		}
	}
	return true
}

// jsonBytes is b for JSON output: as JSON when it is valid JSON, else in
// base64. At most one of the two is set.
func jsonBytes(b []byte) (raw json.RawMessage, b64 string) {
	switch {
	case len(b) == 0:
		return nil, ""
	case json.Valid(b):
		return json.RawMessage(b), ""
	}
	return nil, base64.StdEncoding.EncodeToString(b)
}

// orDash returns s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
