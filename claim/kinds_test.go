package claim_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

type sendEmail struct {
	To      string `json:"to"`
	Subject string `json:"subject"`
}

func (sendEmail) Kind() string { return "send_email" }

type resizeImage struct {
	Path  string `json:"path"`
	Width int    `json:"width"`
}

func (resizeImage) Kind() string { return "resize_image" }

type noKind struct{}

func (noKind) Kind() string { return "" }

type unencodable struct{ C chan int }

func (unencodable) Kind() string { return "unencodable" }

// pointerKind has its Kind on the pointer, which panics on the zero value.
type pointerKind struct{ name string }

func (p *pointerKind) Kind() string { return p.name }

// panickyCodec's Codec panics.
type panickyCodec struct{}

func (panickyCodec) Kind() string       { return "panicky" }
func (panickyCodec) Codec() claim.Codec { panic("no codec") }

// upperArgs picks its own codec, which writes the text in upper case.
type upperArgs struct{ Text string }

func (upperArgs) Kind() string       { return "upper" }
func (upperArgs) Codec() claim.Codec { return upperCodec{} }

type upperCodec struct{}

func (upperCodec) Marshal(v any) ([]byte, error) {
	return []byte(strings.ToUpper(v.(upperArgs).Text)), nil
}

func (upperCodec) Unmarshal(data []byte, v any) error {
	if len(data) == 0 {
		return errors.New("empty")
	}
	v.(*upperArgs).Text = string(data)
	return nil
}

// requireInvalid asserts err is an invalid-argument *lease.Error naming
// field.
func requireInvalid(t testing.TB, err error, field string) *lease.Error {
	t.Helper()
	le := requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	require.Equal(t, field, le.Field)
	return le
}

func TestWorkersRouteEachKindToItsHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newRealBroker(t)
		var (
			mu     sync.Mutex
			emails []sendEmail
			images []claim.Job[resizeImage]
		)
		var ws claim.Workers
		require.NoError(t, claim.AddWorker(&ws, func(_ context.Context, j claim.Job[sendEmail]) error {
			mu.Lock()
			defer mu.Unlock()
			emails = append(emails, j.Args)
			return nil
		}))
		require.NoError(t, claim.AddWorker(&ws, func(_ context.Context, j claim.Job[resizeImage]) error {
			mu.Lock()
			defer mu.Unlock()
			images = append(images, j)
			return nil
		}))
		assert.Equal(t, []string{"resize_image", "send_email"}, ws.Kinds())

		it, err := b.EnqueueArgs(ctx, q, sendEmail{To: "a@example.com", Subject: "hi"})
		require.NoError(t, err)
		assert.Equal(t, "send_email", it.Kind)
		assert.JSONEq(t, `{"to":"a@example.com","subject":"hi"}`, string(it.Payload))
		got, ok := lookup(t, b, it.ID)
		require.True(t, ok)
		assert.Equal(t, "send_email", got.Kind, "the store keeps the kind")
		img, err := b.EnqueueArgs(ctx, q, resizeImage{Path: "/a.png", Width: 64}, claim.Priority(2))
		require.NoError(t, err)
		assert.Equal(t, 2, img.Priority, "enqueue options apply")

		stop := startWork(t, b, claim.Worker{Queue: q, Handler: ws.Handler()})
		synctest.Wait()
		require.NoError(t, stop())
		assert.Equal(t, []sendEmail{{To: "a@example.com", Subject: "hi"}}, emails)
		require.Len(t, images, 1)
		assert.Equal(t, resizeImage{Path: "/a.png", Width: 64}, images[0].Args)
		assert.Equal(t, "resize_image", images[0].Kind)
		assert.Equal(t, img.ID, images[0].Item)
		assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))
	})
}

func TestWorkersDeadLetterAnUnknownKindAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newRealBroker(t)
		var ws claim.Workers
		require.NoError(t, claim.AddWorker(&ws, func(context.Context, claim.Job[sendEmail]) error { return nil }))
		it, err := b.EnqueueArgs(ctx, q, resizeImage{Path: "/b.png"}, claim.MaxAttempts(10))
		require.NoError(t, err)
		raw := enqueue(t, b, q, "no kind at all")

		stop := startWork(t, b, claim.Worker{Queue: q, Handler: ws.Handler()})
		synctest.Wait()
		require.NoError(t, stop())
		dead := listDead(t, b, q)
		require.Len(t, dead, 2)
		assert.Equal(t, it.ID, dead[0].ID)
		assert.Equal(t, 1, dead[0].Attempts, "not retried")
		require.Len(t, dead[0].History, 1)
		assert.Contains(t, dead[0].History[0].Reason, `kind: "resize_image" has no worker`)
		assert.Equal(t, raw.ID, dead[1].ID)
		assert.Contains(t, dead[1].History[0].Reason, `kind: "" has no worker`)
	})
}

func TestWorkersDeadLetterAPayloadThatDoesNotDecode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newRealBroker(t)
		var ws claim.Workers
		ran := false
		require.NoError(t, claim.AddWorker(&ws, func(context.Context, claim.Job[sendEmail]) error { ran = true; return nil }))
		items, err := b.EnqueueMany(ctx, []claim.NewItem{{Queue: q, Kind: "send_email", Payload: []byte("{not json"), MaxAttempts: 7}})
		require.NoError(t, err)

		stop := startWork(t, b, claim.Worker{Queue: q, Handler: ws.Handler()})
		synctest.Wait()
		require.NoError(t, stop())
		assert.False(t, ran)
		dead := listDead(t, b, q)
		require.Len(t, dead, 1)
		assert.Equal(t, items[0].ID, dead[0].ID)
		assert.Equal(t, 1, dead[0].Attempts)
		assert.Contains(t, dead[0].History[0].Reason, `payload: kind "send_email" does not decode`)
	})
}

func TestWorkersUseTheCodecTheArgsPick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newRealBroker(t)
		var ws claim.Workers
		got := make(chan string, 1)
		require.NoError(t, claim.AddWorker(&ws, func(_ context.Context, j claim.Job[upperArgs]) error {
			got <- j.Args.Text
			return nil
		}))
		it, err := b.EnqueueArgs(ctx, q, upperArgs{Text: "quiet"})
		require.NoError(t, err)
		assert.Equal(t, "QUIET", string(it.Payload))
		stop := startWork(t, b, claim.Worker{Queue: q, Handler: ws.Handler()})
		synctest.Wait()
		require.NoError(t, stop())
		assert.Equal(t, "QUIET", <-got)
	})
}

func TestAddWorkerRefusesBadInput(t *testing.T) {
	var ws claim.Workers
	ok := func(context.Context, claim.Job[sendEmail]) error { return nil }
	require.NoError(t, claim.AddWorker(&ws, ok))

	requireInvalid(t, claim.AddWorker(nil, ok), "workers")
	requireInvalid(t, claim.AddWorker[sendEmail](&ws, nil), "handler")
	le := requireInvalid(t, claim.AddWorker(&ws, ok), "kind")
	assert.Contains(t, le.Detail, `"send_email" is registered already`)
	requireInvalid(t, claim.AddWorker(&ws, func(context.Context, claim.Job[noKind]) error { return nil }), "kind")
	requireInvalid(t, claim.AddWorker(&ws, func(context.Context, claim.Job[*pointerKind]) error { return nil }), "kind")
	requireInvalid(t, claim.AddWorker(&ws, func(context.Context, claim.Job[panickyCodec]) error { return nil }), "codec")
	assert.Equal(t, []string{"send_email"}, ws.Kinds(), "nothing changed")
}

func TestEnqueueArgsRefusesBadInput(t *testing.T) {
	b, _, _ := newBroker(t)
	_, err := b.EnqueueArgs(ctx, q, nil)
	requireInvalid(t, err, "args")
	_, err = b.EnqueueArgs(ctx, q, noKind{})
	requireInvalid(t, err, "kind")
	_, err = b.EnqueueArgs(ctx, q, unencodable{C: make(chan int)})
	le := requireInvalid(t, err, "args")
	assert.Contains(t, le.Detail, `kind "unencodable" does not encode`)
	_, err = b.EnqueueArgs(ctx, q, (*pointerKind)(nil))
	requireInvalid(t, err, "kind")
	_, err = b.EnqueueArgs(ctx, q, panickyCodec{})
	requireInvalid(t, err, "codec")
	_, err = b.EnqueueArgs(ctx, "", sendEmail{})
	requireInvalid(t, err, "queue")
	_, err = b.EnqueueArgs(ctx, q, sendEmail{}, claim.Priority(99))
	requireInvalid(t, err, "priority")
	assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q), "nothing added")
}

func TestArgsItemBatchesTypedJobs(t *testing.T) {
	b, _, _ := newBroker(t)
	a, err := claim.ArgsItem(q, sendEmail{To: "x"})
	require.NoError(t, err)
	r, err := claim.ArgsItem(q, resizeImage{Width: 3})
	require.NoError(t, err)
	items, err := b.EnqueueMany(ctx, []claim.NewItem{a, r})
	require.NoError(t, err)
	require.Len(t, items, 2)
	assert.Equal(t, "send_email", items[0].Kind)
	assert.Equal(t, "resize_image", items[1].Kind)
	c := claimOne(t, b, q, "o")
	assert.Equal(t, "send_email", c.Kind, "the claim carries the kind")
	_, err = claim.ArgsItem(q, nil)
	requireInvalid(t, err, "args")
}

// An item gets one set of defaults whichever way it is enqueued: a zero
// MaxAttempts becomes the Broker's default, or DefaultMaxAttempts without
// a Broker; one set is kept.
func TestNewItemWithDefaults(t *testing.T) {
	n, err := claim.ArgsItem(q, sendEmail{To: "x"})
	require.NoError(t, err)
	assert.Equal(t, claim.DefaultMaxAttempts, n.WithDefaults(0).MaxAttempts)
	assert.Equal(t, 3, n.WithDefaults(3).MaxAttempts)
	n.MaxAttempts = 7
	assert.Equal(t, n, n.WithDefaults(3), "a MaxAttempts set is kept")

	b, _, _ := newBroker(t, claim.WithMaxAttempts(3))
	n.MaxAttempts = 0
	items, err := b.EnqueueMany(ctx, []claim.NewItem{n})
	require.NoError(t, err)
	assert.Equal(t, 3, items[0].MaxAttempts)
	it, err := b.EnqueueArgs(ctx, q, sendEmail{To: "y"})
	require.NoError(t, err)
	assert.Equal(t, 3, it.MaxAttempts)
}
