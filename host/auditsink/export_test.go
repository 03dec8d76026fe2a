package auditsink

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// Rebind is Sink.rebind, for the test of a fetch that found no consumer to answer it.
func Rebind(ctx context.Context, s *Sink, cons jetstream.Consumer, err error) jetstream.Consumer {
	return s.rebind(ctx, cons, err)
}

// Consumer is Sink.consumer: it creates or updates the durable.
func Consumer(ctx context.Context, s *Sink) (jetstream.Consumer, error) { return s.consumer(ctx) }
