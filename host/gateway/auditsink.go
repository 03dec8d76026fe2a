package gateway

import (
	"context"
	"fmt"
	"sync"

	"github.com/added060/palisade/host/auditsink"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/config"
	"github.com/nats-io/nats.go"
)

// AuditSinkConfig is the `audit_sink:` section: where the gateway copies its audit stream.
type AuditSinkConfig struct {
	// Postgres runs the PostgreSQL sink (host/auditsink) inside the gateway; nil = none.
	Postgres *PostgresSinkConfig `yaml:"postgres"`
}

// PostgresSinkConfig is `audit_sink.postgres:`.
type PostgresSinkConfig struct {
	// DSN is the connection string (libpq keywords or a postgres:// URL); required. Keep the
	// password out of the file with PGPASSWORD or ~/.pgpass, which the driver reads.
	DSN string `yaml:"dsn"`
	// Retention deletes events older than this; 0 = keep everything.
	Retention config.Duration `yaml:"retention"`
	// Durable names the JetStream consumer; "" = palisade-sink-postgres.
	Durable string `yaml:"durable"`
	// BatchSize is the most events per transaction; 0 = 1000.
	BatchSize int `yaml:"batch_size"`
}

// validate names the first bad field of the section.
func (c AuditSinkConfig) validate() error {
	p := c.Postgres
	if p == nil {
		return nil
	}
	if err := auditsink.CheckDSN(p.DSN); err != nil {
		return &config.FieldError{Path: "audit_sink.postgres.dsn", Err: err}
	}
	if p.Retention < 0 {
		return &config.FieldError{Path: "audit_sink.postgres.retention", Err: fmt.Errorf("%s must not be negative", p.Retention.D())}
	}
	if p.BatchSize < 0 {
		return &config.FieldError{Path: "audit_sink.postgres.batch_size", Err: fmt.Errorf("%d must not be negative", p.BatchSize)}
	}
	return nil
}

// auditSinkFeature runs the audit_sink section's sinks for the life of the gateway: the same
// auditsink.Sink as `palisade audit sink postgres`. A database that is down does not stop the
// gateway: the sink retries, and the events wait in the stream.
type auditSinkFeature struct {
	nc     *nats.Conn
	sink   *auditsink.Sink
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (f *auditSinkFeature) Name() string { return "audit_sink" }

func (f *auditSinkFeature) Init(ctx context.Context, g *Gateway) error {
	c := g.Sections().AuditSink.Postgres
	if c == nil {
		return nil
	}
	// The embedded bus has a sink identity (durable consumers, acks, nothing else); with an
	// external server the gateway's own identity consumes.
	var err error
	if g.Bus().Identity(bus.RoleSink) != nil {
		f.nc, err = g.Bus().ConnectAs(bus.RoleSink, "palisade-audit-sink "+g.Instance())
	} else {
		f.nc, err = g.Bus().Connect("palisade-audit-sink " + g.Instance())
	}
	if err != nil {
		return err
	}
	var trusted []string
	if id := g.Bus().Identity(bus.RoleGateway); id != nil {
		trusted = append(trusted, id.PublicKey())
	}
	f.sink, err = auditsink.New(ctx, auditsink.Options{DSN: c.DSN, Conn: f.nc, Stream: g.Config().Audit.Stream,
		Durable: c.Durable, BatchSize: c.BatchSize, Retention: c.Retention.D(), TrustedKeys: trusted,
		Logger: g.Logger().With("component", "audit_sink")})
	return err
}

func (f *auditSinkFeature) Start(_ context.Context, g *Gateway) error {
	if f.sink == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	f.wg.Go(func() {
		if err := f.sink.Run(ctx); err != nil {
			g.Logger().Error("audit sink stopped", "err", err)
		}
	})
	return nil
}

func (f *auditSinkFeature) Close(context.Context) error {
	if f.cancel != nil {
		f.cancel()
	}
	f.wg.Wait()
	if f.sink != nil {
		f.sink.Close()
	}
	if f.nc != nil {
		f.nc.Close()
	}
	return nil
}

// AuditSink is the gateway's PostgreSQL sink, or nil without an audit_sink.postgres section.
func (g *Gateway) AuditSink() *auditsink.Sink {
	for _, f := range g.features {
		if a, ok := f.(*auditSinkFeature); ok {
			return a.sink
		}
	}
	return nil
}
