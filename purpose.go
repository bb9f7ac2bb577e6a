package lease

import (
	"strconv"
	"strings"
)

// Purpose says what a lease may be used for. It is fixed at grant and checked
// by Use. The zero value is not a valid purpose.
type Purpose uint8

const (
	// Operation leases cover the execution of an operation.
	Operation Purpose = iota + 1
	// StateWrite leases cover writes to shared state.
	StateWrite
	// MigrationHandoff leases cover handing work over during a migration.
	MigrationHandoff
)

var purposeNames = [...]string{
	Operation:        "operation",
	StateWrite:       "state_write",
	MigrationHandoff: "migration_handoff",
}

// Valid reports whether p is one of the defined purposes.
func (p Purpose) Valid() bool { return p >= Operation && p <= MigrationHandoff }

// String returns the purpose's text form ("operation", "state_write",
// "migration_handoff"), or "Purpose(N)" for an invalid value.
func (p Purpose) String() string {
	if p.Valid() {
		return purposeNames[p]
	}
	return "Purpose(" + strconv.Itoa(int(p)) + ")"
}

// MarshalText implements encoding.TextMarshaler. Invalid purposes are an
// error rather than a string that could not be read back.
func (p Purpose) MarshalText() ([]byte, error) {
	if !p.Valid() {
		return nil, invalidArgument("purpose", "marshal", 0, "is "+p.String())
	}
	return []byte(purposeNames[p]), nil
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

// ParsePurpose parses a purpose from its text form ("state_write"), its
// kebab-case form ("state-write") or the seed spec's name ("StateWrite"),
// ignoring case.
func ParsePurpose(s string) (Purpose, error) {
	for p := Operation; p <= MigrationHandoff; p++ {
		name := purposeNames[p]
		if strings.EqualFold(s, name) ||
			strings.EqualFold(s, strings.ReplaceAll(name, "_", "-")) ||
			strings.EqualFold(s, strings.ReplaceAll(name, "_", "")) {
			return p, nil
		}
	}
	return 0, invalidArgument("purpose", "parse", 0, strconv.Quote(s)+" is not a purpose")
}
