package main

// The example's story, checked.
func Example() {
	main()
	// Output:
	// alice holds "report" with token 1
	// bob acquired: false, err: <nil>
	// a minute later alice still holds it: true
	// bob holds "report" with token 2
	// after 27 s without a renewal: context canceled (cause: lock: lock lost [LS_LOCK_LOST])
	// bob's TryLock: lock: lock lost [LS_LOCK_LOST]
	// at 27 s alice acquired: false
	// alice holds "report" again with token 3
	// bob's late write: lock: stale fencing token 2 for "report" (seen 3) [LS_STALE_TOKEN] (stale: true)
	// the store holds "alice's second report"
}
