package claim

import "slices"

// Tags labels the item with tags, returned with it and its claims and a
// filter of List (Query.Tag). See MaxTags and MaxTagLen.
func Tags(tags ...string) EnqueueOption {
	tags = slices.Clone(tags)
	return enqueueOptionFunc(func(o enqueueOptions) enqueueOptions { o.tags = tags; return o })
}

// Metadata attaches bytes to the item (a JSON object, say), stored and
// returned with it and its claims as they are; the store does not read
// them.
func Metadata(b []byte) EnqueueOption {
	b = clone(b)
	return enqueueOptionFunc(func(o enqueueOptions) enqueueOptions { o.metadata = b; return o })
}
