package lease

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Purpose says what a lease may be used for. It is fixed at grant and checked
// by Use. Three purposes are predefined; programs define their own with
// NewPurpose. The zero value is not a valid purpose.
type Purpose uint16

const (
	// Operation leases cover the execution of an operation.
	Operation Purpose = iota + 1
	// StateWrite leases cover writes to shared state.
	StateWrite
	// MigrationHandoff leases cover handing work over during a migration.
	MigrationHandoff
)

// MaxPurposes bounds the purposes a program may define, predefined ones
// included, so that a loop defining names from untrusted input cannot grow
// the registry without limit.
const MaxPurposes = 1024

// The registry of purpose names, indexed by Purpose. Purposes are defined
// once per process and never removed, so readers load the current slice
// without locking; NewPurpose copies on write under mu.
var purposes struct {
	mu    sync.Mutex
	names atomic.Pointer[[]string]
}

func init() {
	names := []string{"", "operation", "state_write", "migration_handoff"}
	purposes.names.Store(&names)
}

func purposeNames() []string { return *purposes.names.Load() }

// NewPurpose defines a purpose named name, or returns the one already
// defined under that name, so calling it again (from another package, say)
// is safe. A name is 1 to 64 characters of lower-case ASCII letters, digits
// and underscores, starting with a letter, like the predefined
// "state_write". An invalid name, or one more purpose than MaxPurposes, gets
// LS_INVALID_ARGUMENT naming the field "purpose", and nothing is defined.
//
// Purposes are process-wide: every Service accepts every defined purpose.
// A user-defined purpose behaves exactly like a predefined one: Use refuses
// a mismatch with LS_PURPOSE_MISMATCH, decisions and text forms carry its
// name. NewPurpose is safe for concurrent use.
func NewPurpose(name string) (Purpose, error) {
	if err := checkPurposeName(name); err != nil {
		return 0, err
	}
	purposes.mu.Lock()
	defer purposes.mu.Unlock()
	names := purposeNames()
	if p, ok := lookupPurpose(names, name); ok {
		return p, nil
	}
	if len(names) > MaxPurposes {
		return 0, invalidArgument("purpose", "define", 0, "more than "+strconv.Itoa(MaxPurposes)+" purposes")
	}
	next := append(names[:len(names):len(names)], name)
	purposes.names.Store(&next)
	return Purpose(len(next) - 1), nil
}

// MustPurpose is NewPurpose for package-level variables: it panics if name
// is invalid.
func MustPurpose(name string) Purpose {
	p, err := NewPurpose(name)
	if err != nil {
		panic(err)
	}
	return p
}

func checkPurposeName(name string) error {
	if name == "" || len(name) > 64 {
		return invalidArgument("purpose", "define", 0, strconv.Quote(name)+" must be 1 to 64 characters")
	}
	for i, c := range []byte(name) {
		letter := c >= 'a' && c <= 'z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '_')) {
			return invalidArgument("purpose", "define", 0, strconv.Quote(name)+" must be lower-case letters, digits and underscores, starting with a letter")
		}
	}
	return nil
}

// lookupPurpose finds name in its accepted forms (see ParsePurpose).
func lookupPurpose(names []string, s string) (Purpose, bool) {
	for p := 1; p < len(names); p++ {
		name := names[p]
		if strings.EqualFold(s, name) ||
			strings.EqualFold(s, strings.ReplaceAll(name, "_", "-")) ||
			strings.EqualFold(s, strings.ReplaceAll(name, "_", "")) {
			return Purpose(p), true
		}
	}
	return 0, false
}

// Valid reports whether p is a predefined or defined purpose.
func (p Purpose) Valid() bool { return p != 0 && int(p) < len(purposeNames()) }

// String returns the purpose's name ("operation", "state_write",
// "migration_handoff", or the name given to NewPurpose), or "Purpose(N)"
// for an invalid value.
func (p Purpose) String() string {
	if names := purposeNames(); p != 0 && int(p) < len(names) {
		return names[p]
	}
	return "Purpose(" + strconv.Itoa(int(p)) + ")"
}

// MarshalText implements encoding.TextMarshaler. Invalid purposes are an
// error rather than a string that could not be read back.
func (p Purpose) MarshalText() ([]byte, error) {
	if !p.Valid() {
		return nil, invalidArgument("purpose", "marshal", 0, "is "+p.String())
	}
	return []byte(p.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler using ParsePurpose.
func (p *Purpose) UnmarshalText(text []byte) error {
	v, err := ParsePurpose(string(text))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// ParsePurpose parses a defined purpose from its name ("state_write"), its
// kebab-case form ("state-write") or its name without underscores
// ("StateWrite"), ignoring case.
func ParsePurpose(s string) (Purpose, error) {
	if p, ok := lookupPurpose(purposeNames(), s); ok {
		return p, nil
	}
	return 0, invalidArgument("purpose", "parse", 0, strconv.Quote(s)+" is not a purpose")
}
