package sqlite_test

// runChild runs the child process's part when the test binary was started
// as one, and reports whether it was.
func runChild() bool { return false }
