package claimstore

import (
	"encoding/json"
	"fmt"
)

// TagsJSON is tags as a JSON array, "[]" for none: for a store that keeps
// an item's tags in one text column and filters on them with the
// database's JSON functions. Checker.NewItem has refused what JSON text
// would not keep as given (with TextOnly).
func TagsJSON(tags []string) string {
	if len(tags) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(tags) // strings always marshal
	return string(b)
}

// ParseTagsJSON reads what TagsJSON wrote: nil for none ("[]" or ""), as
// claim.Memory returns an item without tags.
func ParseTagsJSON(s string) ([]string, error) {
	if s == "[]" || s == "" {
		return nil, nil
	}
	var tags []string
	if err := json.Unmarshal([]byte(s), &tags); err != nil {
		return nil, fmt.Errorf("tags: %w", err)
	}
	return tags, nil
}
