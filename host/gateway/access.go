package gateway

import (
	"log/slog"

	"github.com/added060/palisade/host/admin"
	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/internal/sse"
	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/host/proxy"
	"github.com/labstack/echo/v4"
	"github.com/nats-io/nats.go"
)

// What features reach through. Setters are for Init only (before the engine is built).

// Config returns the validated configuration (with defaults).
func (g *Gateway) Config() *config.Config { return &g.cfg }

// Sections returns the gateway's typed feature sections (read-only).
func (g *Gateway) Sections() *Sections { return &g.sections }

// Logger returns the gateway's logger.
func (g *Gateway) Logger() *slog.Logger { return g.log }

// Instance is this gateway's name in audit events.
func (g *Gateway) Instance() string { return g.instance }

// DataDir is the state directory.
func (g *Gateway) DataDir() string { return g.cfg.DataDir }

// Bus returns the NATS bus.
func (g *Gateway) Bus() *bus.Bus { return g.bus }

// NATS returns the gateway's NATS connection.
func (g *Gateway) NATS() *nats.Conn { return g.nc }

// Audit returns the audit publisher.
func (g *Gateway) Audit() *audit.Publisher { return g.audit }

// Echo returns the HTTP router.
func (g *Gateway) Echo() *echo.Echo { return g.echo }

// Admin returns the admin API server (add routes to Admin().Group()).
func (g *Gateway) Admin() *admin.Server { return g.admin }

// Active returns the active chain holder.
func (g *Gateway) Active() *chain.Active { return &g.active }

// Engine returns the decision engine (nil during Init).
func (g *Gateway) Engine() *engine.Engine { return g.engine }

// Proxy is the Streamable HTTP proxy (nil before New built it); features serve endpoints that
// share its memory budget through it (HookHandler).
func (g *Gateway) Proxy() *proxy.HTTP { return g.http }

// Budget is the gateway's one memory budget (limits.stream_buffer_bytes): the MCP proxy's
// bodies, answers and events, the hook's inputs and the admin playground's bodies draw on it.
func (g *Gateway) Budget() *sse.Budget { return g.budget }

// Metrics returns the Prometheus metrics.
func (g *Gateway) Metrics() *engine.Metrics { return g.metrics }

// Runtime returns the plugin runtime.
func (g *Gateway) Runtime() *plugin.Runtime { return g.core.Runtime }

// SetApprover sets who decides held (ask) calls. Init only.
func (g *Gateway) SetApprover(a engine.Approver) { g.engOpts.Approver = a }

// AddHook adds an engine hook. Init only.
func (g *Gateway) AddHook(h engine.Hook) { g.engOpts.Hooks = append(g.engOpts.Hooks, h) }

// Recent returns the gateway's one ring of recent audit events (kept before they are published),
// which the dashboard and the own MCP server both read.
func (g *Gateway) Recent() *audit.Ring { return g.recent }

// WrapRecorder wraps the recorder every event goes through (e.g. to feed a live view). Init only.
func (g *Gateway) WrapRecorder(wrap func(engine.Recorder) engine.Recorder) {
	g.recorder = wrap(g.recorder)
}

// Addr returns the listening address after Start.
func (g *Gateway) Addr() string {
	if g.ln == nil {
		return ""
	}
	return g.ln.Addr().String()
}
