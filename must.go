package lease

// Must returns v, or panics with err if err is not nil. It is for
// configurations fixed in the source, tests and package-level variables,
// where a bad option is a bug found on the first run:
//
//	svc := lease.Must(lease.New(lease.WithClock(clock)))
//	b := lease.Must(claim.New(lease.Must(claim.NewMemory(svc))))
//
// Code configured at run time checks the error instead.
func Must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
