package claimtest

import (
	"strings"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// testKinds: an item's Kind is stored as given and returned by Enqueue,
// Claim, Lookup and List, and List with a Kind lists only the items of
// that kind.
func testKinds(e *env) {
	q := queue(0)
	mail, sms, none := newItem(q, "mail"), newItem(q, "sms"), newItem(q, "none")
	mail.Kind, sms.Kind = "send_mail", "send_sms"
	got := e.enqueue(mail, sms, none)
	for i, want := range []string{"send_mail", "send_sms", ""} {
		assert.Equal(e, want, got[i].Kind, "Enqueue returns the item's Kind")
		assert.Equal(e, want, e.lookup(got[i].ID).Kind, "Lookup returns the item's Kind")
	}
	assert.Equal(e, []claim.ItemID{got[0].ID}, itemIDs(e.list(claim.Query{Queue: q, Kind: "send_mail", Limit: 10})))
	assert.Equal(e, []claim.ItemID{got[1].ID}, itemIDs(e.list(claim.Query{Queue: q, Kind: "send_sms", Limit: 10})))
	assert.Empty(e, e.list(claim.Query{Queue: q, Kind: "unknown", Limit: 10}))
	assert.Len(e, e.list(claim.Query{Queue: q, Limit: 10}), 3, "List with no Kind lists every kind")
	claims := e.claim(q, "a", 3, long)
	kinds := map[claim.ItemID]string{}
	for _, c := range claims {
		kinds[c.Item] = c.Kind
	}
	assert.Equal(e, map[claim.ItemID]string{got[0].ID: "send_mail", got[1].ID: "send_sms", got[2].ID: ""}, kinds,
		"Claim returns the item's Kind")
	for _, it := range e.list(claim.Query{Queue: q, State: claim.Claimed, Kind: "send_sms", Limit: 10}) {
		assert.Equal(e, got[1].ID, it.ID, "List filters by State and Kind together")
	}
}

// testTags: an item's tags and metadata are stored as given (up to the
// limits) and returned by Enqueue, Claim, Lookup and List, and List with a
// Tag lists only the items that have it.
func testTags(e *env) {
	q := queue(0)
	most := make([]string, claim.MaxTags)
	fill(most)
	most[0] = strings.Repeat("x", claim.MaxTagLen) // the longest tag
	urgent, plain, full := newItem(q, "urgent"), newItem(q, "plain"), newItem(q, "full")
	urgent.Tags, urgent.Metadata = []string{"urgent", "mail"}, []byte(`{"by":"ops"}`)
	full.Tags = most
	got := e.enqueue(urgent, plain, full)
	for i, n := range []claim.NewItem{urgent, plain, full} {
		for _, it := range []claim.Item{got[i], e.lookup(got[i].ID)} {
			assert.Equal(e, n.Tags, it.Tags, "tags of item %d", i)
			assert.Equal(e, n.Metadata, it.Metadata, "metadata of item %d", i)
		}
	}
	assert.Equal(e, []claim.ItemID{got[0].ID}, itemIDs(e.list(claim.Query{Queue: q, Tag: "mail", Limit: 10})))
	assert.Equal(e, []claim.ItemID{got[2].ID}, itemIDs(e.list(claim.Query{Queue: q, Tag: "t5", Limit: 10})))
	assert.Empty(e, e.list(claim.Query{Queue: q, Tag: "unknown", Limit: 10}))
	cs := e.claim(q, "a", 3, long)
	require.Len(e, cs, 3)
	for _, c := range cs {
		if c.Item == got[0].ID {
			assert.Equal(e, urgent.Tags, c.Tags, "Claim returns the tags")
			assert.Equal(e, urgent.Metadata, c.Metadata, "Claim returns the metadata")
		}
	}
}
