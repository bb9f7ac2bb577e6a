// Package console serves an operator console for a lease.Service and what
// is built on it: claim queues with their counts, throughput and failure
// rate; their items, paged and filtered, with payload, attempts and
// history; locks and their holders, elections and their leaders, leases
// and the audit trail. With actions switched on it also retries, cancels,
// deletes and requeues items, one or in bounded bulk, and pauses and
// resumes queues, each through the claim.Broker's public API.
//
// Each section is a page of its own, with paging, filters and JSON. A page
// the Config gives no source for is left out: it is not in the
// navigation, and answers 404 Not Found.
//
// The console uses net/http, html/template and embed only. Every page is
// read-only unless Config.Actions is set; actions are POST only, pass Go's
// http.CrossOriginProtection and Config.Authorize, and are refused with 403
// Forbidden otherwise, changing nothing. It links relatively, so it works
// mounted under any prefix:
//
//	ops, err := console.New(console.Config{Broker: broker})
//	if err != nil { ... }
//	mux.Handle("/ops/", http.StripPrefix("/ops", ops))
//
// Every page does a bounded amount of work: each table is one call to its
// source, limited to a page of rows.
package console
