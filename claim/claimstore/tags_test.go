package claimstore_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim/claimstore"
)

func TestTagsJSON(t *testing.T) {
	assert.Equal(t, "[]", claimstore.TagsJSON(nil))
	assert.Equal(t, "[]", claimstore.TagsJSON([]string{}))
	assert.Equal(t, `["a","b \"c\""]`, claimstore.TagsJSON([]string{"a", `b "c"`}))
}

func TestParseTagsJSON(t *testing.T) {
	for _, s := range []string{"", "[]"} {
		tags, err := claimstore.ParseTagsJSON(s)
		require.NoError(t, err)
		assert.Nil(t, tags, "none is nil, as Memory returns it")
	}
	in := []string{"a", "é", `"`}
	tags, err := claimstore.ParseTagsJSON(claimstore.TagsJSON(in))
	require.NoError(t, err)
	assert.Equal(t, in, tags)
	_, err = claimstore.ParseTagsJSON("[1")
	require.ErrorContains(t, err, "tags: ")
}
