// Package browsertest drives the operator console (package console) in
// headless Chromium against real claim stores, the memory store and the
// PostgreSQL store: it is a module of its own
// so that the root module does not depend on chromedp. It has no API; its
// tests are its content. They need /usr/bin/chromium (LEASE_CHROMIUM names
// another) and install Debian's chromium package when it is missing; they
// fail, never skip, without it. The PostgreSQL half needs
// LEASE_POSTGRES_DSN (run ../../scripts/with-postgres go test ./...) and
// fails without it.
//
// With LEASE_CONSOLE_SCREENSHOTS set to a directory, the tests also write
// PNG screenshots of the pages there (see scripts/console-screenshot).
package browsertest
