// Package textcol says whether a string fits a text column: what the claim
// store and lock provider seams refuse for a store or provider that keeps
// names in such columns. It knows neither seam; each wraps its answers in
// its own errors.
package textcol

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Text returns why s cannot be kept as given in a text column (it is not
// valid UTF-8, or holds a NUL byte), or "" when it can.
func Text(s string) string {
	switch {
	case !utf8.ValidString(s):
		return fmt.Sprintf("%q is not valid UTF-8", s)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Sprintf("%q contains a NUL byte", s)
	}
	return ""
}

// Name returns why s is no name: empty, longer than maxLen bytes (0 is no
// limit), or, when text, what Text refuses; "" when it is one.
func Name(s string, maxLen int, text bool) string {
	switch {
	case s == "":
		return "must not be empty"
	case maxLen > 0 && len(s) > maxLen:
		return fmt.Sprintf("is %d bytes, more than %d", len(s), maxLen)
	case text:
		return Text(s)
	}
	return ""
}
