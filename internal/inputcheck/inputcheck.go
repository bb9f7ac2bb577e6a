// Package inputcheck refuses names and text that a store or provider
// cannot hold, with the errors of the package that runs it: the common
// ground of internal/lockkit and internal/claimkit.
package inputcheck

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/leasehold/lease"
)

// Names checks names and text as one store or provider does. The zero
// value of each limit is none.
type Names struct {
	// Package names the errors (lease.Error.Package).
	Package string
	// MaxNameLen is the longest name, in bytes.
	MaxNameLen int
	// TextOnly refuses text that is not valid UTF-8 or holds a NUL byte.
	TextOnly bool
}

// Invalid reports bad input in field of op.
func (n Names) Invalid(op, field, detail string) error {
	return &lease.Error{Package: n.Package, Code: lease.CodeInvalidArgument, Op: op, Field: field, Detail: detail}
}

// Text refuses, when n.TextOnly, a string that is not valid UTF-8 or holds
// a NUL byte.
func (n Names) Text(op, field, s string) error {
	if !n.TextOnly {
		return nil
	}
	switch {
	case !utf8.ValidString(s):
		return n.Invalid(op, field, fmt.Sprintf("%q is not valid UTF-8", s))
	case strings.IndexByte(s, 0) >= 0:
		return n.Invalid(op, field, fmt.Sprintf("%q contains a NUL byte", s))
	}
	return nil
}

// Name refuses an empty name, one longer than n.MaxNameLen, and what Text
// refuses.
func (n Names) Name(op, field, s string) error {
	switch {
	case s == "":
		return n.Invalid(op, field, "must not be empty")
	case n.MaxNameLen > 0 && len(s) > n.MaxNameLen:
		return n.Invalid(op, field, fmt.Sprintf("is %d bytes, more than %d", len(s), n.MaxNameLen))
	}
	return n.Text(op, field, s)
}
