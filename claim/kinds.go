package claim

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"

	"github.com/leasehold/lease"
)

// Args is the arguments of a job of one kind: a Go type whose values are
// encoded into an item's payload, the item carrying the kind's name
// (Item.Kind) so that Workers can route it to the handler of its type.
// Kind must return the same non-empty name for every value of the type,
// the zero value included, and no two registered types may share one; the
// name is stored with each item, so renaming a kind strands the items
// already enqueued under the old name. Values are encoded as JSON unless
// the type picks another codec (CodecArgs).
type Args interface {
	Kind() string
}

// CodecArgs is Args whose type picks its codec, in place of JSON. Codec
// must return the same codec for every value of the type, the zero value
// included, since the zero value's is the one that decodes.
type CodecArgs interface {
	Args
	Codec() Codec
}

// Codec turns the arguments of a job into a payload and back. Unmarshal is
// given a pointer to a value of the args type. A Codec must be safe for
// concurrent use.
type Codec interface {
	Marshal(v any) ([]byte, error)
	Unmarshal(data []byte, v any) error
}

// JSONCodec is the default Codec: encoding/json. It is an empty value,
// safe to share.
type JSONCodec struct{}

// Marshal returns the JSON encoding of v.
func (JSONCodec) Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// Unmarshal decodes the JSON data into v.
func (JSONCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// codecOf returns the codec of args: its own, or JSON.
func codecOf(args Args) Codec {
	if ca, ok := args.(CodecArgs); ok {
		if c := ca.Codec(); c != nil {
			return c
		}
	}
	return JSONCodec{}
}

// kindOf returns the kind and codec of args, refusing an empty kind and a
// Kind or Codec method that panics (a method of a pointer type called on
// nil, say).
func kindOf(op string, args Args) (kind string, codec Codec, err error) {
	field := "kind"
	defer func() {
		if v := recover(); v != nil {
			err = invalid(op, field, "panicked: give the args type methods that work on its zero value")
		}
	}()
	if kind = args.Kind(); kind == "" {
		return "", nil, invalid(op, field, "must not be empty")
	}
	field = "codec"
	return kind, codecOf(args), nil
}

// ArgsItem returns the item that carries args to queue: its Kind is
// args.Kind() and its Payload the encoding of args. Pass it to
// Broker.EnqueueMany, or to a store's enqueue in the caller's transaction
// (the postgres ClaimStore's EnqueueTx), to enqueue typed jobs in a batch;
// both fill its MaxAttempts with the default (see NewItem.WithDefaults),
// which a store's own Enqueue expects done. A
// nil args, an empty kind or args that do not encode get an error matching
// lease.ErrInvalidArgument that names the field ("args", "kind").
func ArgsItem(queue string, args Args) (NewItem, error) {
	kind, payload, err := encodeArgs("enqueue", args)
	if err != nil {
		return NewItem{}, err
	}
	return NewItem{Queue: queue, Kind: kind, Payload: payload}, nil
}

// encodeArgs returns the kind and payload of args.
func encodeArgs(op string, args Args) (kind string, payload []byte, err error) {
	if args == nil {
		return "", nil, invalid(op, "args", "must not be nil")
	}
	kind, codec, err := kindOf(op, args)
	if err != nil {
		return "", nil, err
	}
	payload, err = codec.Marshal(args)
	if err != nil {
		return "", nil, invalid(op, "args", "kind "+strconv.Quote(kind)+" does not encode: "+err.Error())
	}
	return kind, payload, nil
}

// EnqueueArgs adds an item carrying args to queue and returns it, as
// Enqueue does with a payload: the item's Kind is args.Kind() and its
// Payload the encoding of args (JSON unless the type is CodecArgs). Work
// with a Workers handler decodes it for the handler registered for the
// kind. Besides Enqueue's errors, a nil args, an empty kind or args that
// do not encode get an error matching lease.ErrInvalidArgument that names
// the field ("args", "kind"), and nothing is added.
func (b *Broker) EnqueueArgs(ctx context.Context, queue string, args Args, opts ...EnqueueOption) (Item, error) {
	const op = "enqueue"
	if err := checkContext(ctx, op); err != nil {
		return Item{}, err
	}
	kind, payload, err := encodeArgs(op, args)
	if err != nil {
		return Item{}, err
	}
	return b.enqueue(ctx, queue, kind, payload, opts)
}

// Job is one claimed item of kind T with its decoded arguments: what the
// handler AddWorker registers receives. It is a plain value, safe to copy;
// Args is the handler's own.
type Job[T Args] struct {
	Claim   // the claim, with the item's Kind and raw Payload
	Args  T // the decoded payload
}

// Workers routes the items of a queue to handlers by kind: register a
// handler per args type with AddWorker, then run Work with Handler. Its
// zero value is ready to use and has no handlers. A Workers must not be
// copied once used. It is safe for concurrent use: handlers may be added
// while Work runs, and an item is routed to the handlers registered when
// it is claimed.
type Workers struct {
	mu    sync.RWMutex
	kinds map[string]Handler
}

// AddWorker registers h for the items of T's kind (the Kind of T's zero
// value) in ws: Workers.Handler decodes such an item's payload into a T,
// with T's codec, and calls h. A payload that does not decode is
// dead-lettered at once (see Discard) with a reason naming the kind. A nil
// ws or h, an empty kind, or a kind registered already gets an error
// matching lease.ErrInvalidArgument that names the field ("workers",
// "handler", "kind"), and nothing changes.
func AddWorker[T Args](ws *Workers, h func(ctx context.Context, j Job[T]) error) error {
	const op = "add_worker"
	switch {
	case ws == nil:
		return invalid(op, "workers", "must not be nil")
	case h == nil:
		return invalid(op, "handler", "must not be nil")
	}
	var zero T
	kind, codec, err := kindOf(op, zero)
	if err != nil {
		return err
	}
	handle := func(ctx context.Context, c Claim) error {
		var args T
		if err := codec.Unmarshal(c.Payload, &args); err != nil {
			return Discard(&lease.Error{Package: "claim", Code: lease.CodeInvalidArgument, Op: "work", Field: "payload",
				Detail: "kind " + strconv.Quote(kind) + " does not decode: " + err.Error()})
		}
		return h(ctx, Job[T]{Claim: c, Args: args})
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if _, ok := ws.kinds[kind]; ok {
		return invalid(op, "kind", strconv.Quote(kind)+" is registered already")
	}
	if ws.kinds == nil {
		ws.kinds = make(map[string]Handler)
	}
	ws.kinds[kind] = handle
	return nil
}

// Kinds returns the registered kinds, sorted.
func (ws *Workers) Kinds() []string {
	ws.mu.RLock()
	defer ws.mu.RUnlock()
	kinds := make([]string, 0, len(ws.kinds))
	for k := range ws.kinds {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}

// Handler returns the Handler that routes each claimed item to the handler
// registered for its Kind, for Worker.Handler. An item whose kind has no
// handler (an empty kind included) is dead-lettered at once, never retried:
// its reason, an error matching lease.ErrInvalidArgument with Field "kind",
// names the kind.
func (ws *Workers) Handler() Handler {
	return func(ctx context.Context, c Claim) error {
		ws.mu.RLock()
		h := ws.kinds[c.Kind]
		ws.mu.RUnlock()
		if h == nil {
			return Discard(&lease.Error{Package: "claim", Code: lease.CodeInvalidArgument, Op: "work", Field: "kind",
				Detail: strconv.Quote(c.Kind) + " has no worker"})
		}
		return h(ctx, c)
	}
}
