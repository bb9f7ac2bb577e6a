// Package claimstore is for authors of a [claim.Store]: the checks of a
// store's input, so that every store refuses the same bad input with the
// same error, and refuses as well what it cannot hold.
//
// A [Checker] names the store's package and its own limits (the longest
// name a column holds, text that must be valid UTF-8, the range of its
// integers); its checks apply package claim's rules (a queue is named,
// MaxPriority, MaxTimeout, MaxTags, MaxTagLen, a Settle is one of the four)
// and those limits, and return a *lease.Error with code
// lease.CodeInvalidArgument whose Field names the offending field in the
// Broker's words ("queue", "items[2].max_attempts", "ref") and whose message
// starts with the store's package. A store calls the check of an operation
// first, before it changes anything:
//
//	var checks = claimstore.Checker{Package: "mystore", MaxNameLen: 1024, TextOnly: true}
//
//	func (s *Store) Claim(ctx context.Context, req claim.ClaimRequest) ([]claim.Claim, error) {
//		if err := checks.ClaimRequest("claims.claim", req); err != nil {
//			return nil, err
//		}
//		...
//	}
//
// [Checker.StaleClaim] is the error for a call on a claim that is no longer
// live, and [TagsJSON] and [ParseTagsJSON] keep an item's tags in one text
// column, as the SQL stores of this repository do.
//
// Package claim/claimtest checks that a store does. The types a store
// receives, claim.ClaimRequest and claim.Settlement, stay in package claim,
// where claim.Store names them.
//
// Users of a work queue need nothing here: package claim is theirs.
package claimstore
