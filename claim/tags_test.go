package claim_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

func TestEnqueueTagsAndMetadata(t *testing.T) {
	b, _, _ := newBroker(t)
	tags := []string{"urgent"}
	it := enqueue(t, b, q, "x", claim.Tags(tags...), claim.Metadata([]byte(`{"k":1}`)))
	tags[0] = "changed" // the option holds its own copy
	assert.Equal(t, []string{"urgent"}, it.Tags)
	c := claimOne(t, b, q, "w")
	assert.Equal(t, []string{"urgent"}, c.Tags)
	assert.Equal(t, `{"k":1}`, string(c.Metadata))
	got, err := b.List(ctx, claim.Query{Queue: q, Tag: "urgent", Limit: 10})
	require.NoError(t, err)
	require.Len(t, got, 1)
}

func TestEnqueueRefusesTagsBeyondTheLimits(t *testing.T) {
	b, _, _ := newBroker(t)
	for field, opt := range map[string]claim.EnqueueOption{
		"tags":    claim.Tags(make([]string, claim.MaxTags+1)...),
		"tags[1]": claim.Tags("ok", strings.Repeat("x", claim.MaxTagLen+1)),
		"tags[0]": claim.Tags(""),
	} {
		_, err := b.Enqueue(ctx, q, nil, opt)
		le := requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
		assert.Equal(t, field, le.Field)
	}
	_, err := b.EnqueueMany(ctx, []claim.NewItem{{Queue: q}, {Queue: q, Tags: []string{""}}})
	le := requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "items[1].tags[0]", le.Field)
	assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q), "nothing enqueued")
}
