package sqlite

import (
	"context"
	"errors"
	"math"
	"strings"

	sqlite3 "modernc.org/sqlite"
	lib "modernc.org/sqlite/lib"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim/claimstore"
	"github.com/leasehold/lease/lock/lockprovider"
)

// What was wrong with the file, for errors.Is. Every storage failure is a
// *lease.Error with code LS_STORAGE (matching lease.ErrStorage) whose
// message names the file, and matches one of these when SQLite said which.
var (
	// ErrReadOnly: the file or its directory cannot be written.
	ErrReadOnly = errors.New("sqlite: the database file is read-only")
	// ErrFull: the disk, or the cap of WithMaxPages, is full.
	ErrFull = errors.New("sqlite: the database file is full")
	// ErrCorrupt: the file is damaged.
	ErrCorrupt = errors.New("sqlite: the database file is corrupt")
	// ErrNotDatabase: the file is not an SQLite database.
	ErrNotDatabase = errors.New("sqlite: the file is not an SQLite database")
	// ErrCannotOpen: the file cannot be opened or created.
	ErrCannotOpen = errors.New("sqlite: the database file cannot be opened")
)

// kindOf says what SQLite reported, and whether the call may be tried
// again (the file was busy or locked by another connection).
func kindOf(err error) (kind error, busy bool) {
	var se *sqlite3.Error
	if !errors.As(err, &se) {
		return nil, false
	}
	switch se.Code() & 0xff {
	case lib.SQLITE_BUSY, lib.SQLITE_LOCKED:
		return nil, true
	case lib.SQLITE_READONLY, lib.SQLITE_PERM:
		return ErrReadOnly, false
	case lib.SQLITE_FULL:
		return ErrFull, false
	case lib.SQLITE_CORRUPT:
		return ErrCorrupt, false
	case lib.SQLITE_NOTADB:
		return ErrNotDatabase, false
	case lib.SQLITE_CANTOPEN:
		return ErrCannotOpen, false
	}
	return nil, false
}

func isBusy(err error) bool {
	_, busy := kindOf(err)
	return busy
}

// storage wraps err, a failure of the database file at path in op, as a
// storage error: a *lease.Error with CodeStorage, naming the file and, when
// SQLite said what was wrong, matching that (ErrCorrupt, ...) as well. A
// *lease.Error or a context error passes unchanged.
func storage(op, path string, err error) error {
	var le *lease.Error
	if errors.As(err, &le) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	detail := path + ": " + err.Error()
	kind, _ := kindOf(err)
	if kind != nil {
		detail = path + ": " + strings.TrimPrefix(kind.Error(), "sqlite: ") + ": " + err.Error()
	}
	return &lease.Error{Package: "sqlite", Code: lease.CodeStorage, Op: op, Detail: detail, Err: kind}
}

func invalid(op, field, detail string) error {
	return &lease.Error{Package: "sqlite", Code: lease.CodeInvalidArgument, Op: op, Field: field, Detail: detail}
}

func closedError(op string) error {
	return &lease.Error{Package: "sqlite", Code: lease.CodeClosed, Op: op, Detail: "store closed"}
}

// MaxNameLen is the longest name the store accepts, in bytes: a queue, key,
// owner, lock name or execution ID.
const MaxNameLen = 1024

// lockChecks applies the lock contract's checks and the same limits to
// lock names and execution IDs.
var lockChecks = lockprovider.Checker{Package: "sqlite", MaxNameLen: MaxNameLen, TextOnly: true}

// checks applies package claim's rules and this package's limits: names of
// at most MaxNameLen bytes, text as JSON and SQLite text keep it, attempts
// and IDs in 32 and 64 signed bits, as the PostgreSQL store holds them.
var checks = claimstore.Checker{Package: "sqlite", MaxNameLen: MaxNameLen, TextOnly: true,
	MaxAttempts: math.MaxInt32, MaxID: math.MaxInt64}
