package postgres

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/leasehold/lease/claim"
)

// tagsJSON is tags as the JSON array the tags column holds.
func tagsJSON(tags []string) string {
	if len(tags) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(tags) // strings always marshal
	return string(b)
}

// parseTags reads the tags column: nil for none, as the memory store
// returns them.
func parseTags(s string) ([]string, error) {
	if s == "[]" || s == "" {
		return nil, nil
	}
	var tags []string
	if err := json.Unmarshal([]byte(s), &tags); err != nil {
		return nil, fmt.Errorf("tags: %w", err)
	}
	return tags, nil
}

// checkTags applies claim's limits on tags, and what a text value holds,
// to the item at (an "items[i]: " prefix).
func checkTags(at string, tags []string) error {
	const op = "claims.enqueue"
	if len(tags) > claim.MaxTags {
		return invalid(op, "tags", fmt.Sprintf("%s%d tags, more than %d", at, len(tags), claim.MaxTags))
	}
	for j, tag := range tags {
		field := "tags[" + strconv.Itoa(j) + "]"
		if tag == "" || len(tag) > claim.MaxTagLen {
			return invalid(op, field, fmt.Sprintf("%sis %d bytes, not between 1 and %d", at, len(tag), claim.MaxTagLen))
		}
		if err := checkText(op, field, tag); err != nil {
			return err
		}
	}
	return nil
}
