package gateway

import (
	"context"

	"github.com/added060/palisade/host/admin"
	"github.com/added060/palisade/host/approval"
	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/auditsink"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/selfmcp"
)

// ApprovalsConfig is the `approvals:` section of palisade.yaml.
//
//	approvals:
//	  disabled: false      # true = ask resolves by the bundle's fallback, no queue
//	  timeout: 2m          # hold when the rule names none
//	  max_timeout: 1h      # cap on a rule's timeout
//	  on_timeout: deny     # allow | deny when nobody decides
//	  progress_every: 5s   # progress notifications to the waiting client
//	  hide_arguments: false
//	  local: false         # true = do not share held calls over NATS KV
//	  bucket: PALISADE_APPROVALS
//	  feed_size: 1000      # recent events the dashboard keeps
//	  ask_client: false    # true = also ask the person at the client (MCP elicitation)
//	  ask_url: ""          # approval page for url-mode clients, "{id}" = the held call
type ApprovalsConfig struct {
	Disabled      bool            `yaml:"disabled"`
	Timeout       config.Duration `yaml:"timeout"`
	MaxTimeout    config.Duration `yaml:"max_timeout"`
	OnTimeout     string          `yaml:"on_timeout"`
	ProgressEvery config.Duration `yaml:"progress_every"`
	HideArguments bool            `yaml:"hide_arguments"`
	Local         bool            `yaml:"local"`
	Bucket        string          `yaml:"bucket"`
	FeedSize      int             `yaml:"feed_size"`
	// AskClient puts a held call to the person at the client too, as an elicitation/create on
	// the call's own stream, when the client declared elicitation (proxy.HTTPOptions.AskClient).
	// Off by default: the client is the agent's process, and its answer is taken as the
	// person's (docs/DESIGN.md "Asking in the client").
	AskClient bool `yaml:"ask_client"`
	// AskURL is the approval page url-mode clients are linked to ("{id}" = the held call's
	// id); "" = every client gets the form.
	AskURL string `yaml:"ask_url"`
}

// approvals wires host/approval and the dashboard: it holds ask calls, feeds live decisions to
// the admin API's SSE stream and chain statistics, and serves /ui.
type approvals struct {
	cfg     ApprovalsConfig
	feed    *admin.Feed
	manager *approval.Manager
}

func (a *approvals) Name() string { return "approvals" }

// recordVia sends events through the gateway's recorder chain as it is when they happen.
type recordVia struct{ g *Gateway }

func (r recordVia) Record(ctx context.Context, ev audit.Event) { r.g.Record(ctx, ev) }

func (a *approvals) Init(ctx context.Context, g *Gateway) error {
	a.cfg = g.Sections().Approvals // validated by New (Sections.Validate)
	if a.cfg.FeedSize > 0 {
		g.Recent().Resize(a.cfg.FeedSize) // the one ring: the own MCP server reads it too
	}
	g.WrapRecorder(func(next engine.Recorder) engine.Recorder {
		a.feed = admin.NewFeed(admin.FeedOptions{Ring: g.Recent(), Next: next})
		return a.feed
	})
	if a.cfg.Disabled {
		return nil
	}
	o := approval.Options{
		Bucket: a.cfg.Bucket, Gateway: g.Instance(), Timeout: a.cfg.Timeout.D(), MaxTimeout: a.cfg.MaxTimeout.D(),
		OnTimeout: a.cfg.OnTimeout, ProgressEvery: a.cfg.ProgressEvery.D(), HideArguments: a.cfg.HideArguments,
		Recorder: recordVia{g}, Logger: g.Logger(), Bundle: g.activeInfo,
	}
	if !a.cfg.Local {
		o.Conn = g.NATS()
		o.Signer, o.Approvers = g.approvers()
	}
	m, err := approval.New(ctx, o)
	if err != nil {
		return err
	}
	a.manager = m
	g.SetApprover(m)
	return nil
}

func (a *approvals) Start(ctx context.Context, g *Gateway) error {
	grp := g.Admin().Group()
	if a.manager != nil {
		admin.RegisterApprovals(grp, a.manager)
	}
	admin.RegisterEvents(grp, a.feed, a.manager)
	hist := g.historySource(ctx)
	admin.RegisterHistory(grp, hist, g.Logger())
	if ls, ok := hist.(admin.LabelSource); ok {
		admin.RegisterLabels(grp, hist, ls, recordVia{g})
	}
	admin.RegisterChain(grp, g.Active(), a.feed.Stats())
	admin.RegisterPlayground(grp, g.Active(), a.manager != nil, g.Budget())
	admin.RegisterUI(g.Echo(), g.Admin().Prefix())
	return nil
}

func (a *approvals) Close(ctx context.Context) error {
	if a.manager != nil {
		return a.manager.Close()
	}
	return nil
}

// approvers are the approval signer of this gateway's admin API (the embedded server's approver
// key, or nats.approver_creds) and the approver keys whose decisions it accepts: that one as
// "approver", each of nats.approvers as "approver-" and the key's first 8 characters after U.
func (g *Gateway) approvers() (approval.Signer, map[string]string) {
	keys := map[string]string{}
	for _, k := range g.cfg.NATS.Approvers {
		keys[k] = "approver-" + k[1:min(len(k), 9)]
	}
	id := g.bus.Identity(bus.RoleApprover)
	if id == nil {
		if len(keys) == 0 {
			g.log.Warn("no approver keys: decisions written to the approvals bucket by other processes are ignored (set nats.approvers or nats.approver_creds)")
		}
		return nil, keys
	}
	keys[id.PublicKey()] = approval.DefaultApproverName
	return id, keys
}

// activeInfo identifies the active bundle (zero before the first activation): a held call's
// approval is applied only while the bundle that asked is still active.
func (g *Gateway) activeInfo() chain.Info {
	if c := g.Active().Load(); c != nil {
		return c.Info()
	}
	return chain.Info{}
}

// Approvals returns the approval manager, or nil when approvals are disabled or the feature is
// not running (for tests and other features).
func (g *Gateway) Approvals() *approval.Manager {
	for _, f := range g.features {
		if a, ok := f.(*approvals); ok {
			return a.manager
		}
	}
	return nil
}

// endLiveStreams runs when the HTTP server starts shutting down: graceful Shutdown waits for
// active connections, and neither a dashboard's event stream nor a held call goes idle by
// itself. Held calls are denied (audited as gateway-shutdown) and event streams end.
func (g *Gateway) endLiveStreams() {
	for _, f := range g.features {
		if a, ok := f.(*approvals); ok {
			if a.manager != nil {
				a.manager.ReleaseAll(context.Background(), "the gateway is shutting down")
			}
			if a.feed != nil {
				a.feed.Close()
			}
		}
	}
}

// permissions is the approval queue for the own MCP server's requestPermission, nil (an
// untyped nil: selfmcp tests the interface) when approvals are off.
func (g *Gateway) permissions() selfmcp.Permissions {
	if m := g.Approvals(); m != nil {
		return m
	}
	return nil
}

// historySource is where the dashboard's history reads stored decisions: the PostgreSQL sink's
// table when the gateway runs one (audit_sink.postgres), otherwise the audit stream, each event
// verified against the signers bucket and the gateway's own key.
func (g *Gateway) historySource(ctx context.Context) admin.HistorySource {
	if s := g.AuditSink(); s != nil {
		return auditsink.NewHistory(s.Store())
	}
	var trusted []string
	if id := g.Bus().Identity(bus.RoleGateway); id != nil {
		trusted = append(trusted, id.PublicKey())
	}
	return audit.NewStreamHistory(ctx, audit.StreamHistoryOptions{Conn: g.NATS(), Stream: g.Config().Audit.Stream,
		Signers: audit.NewSigners(ctx, g.NATS(), "", trusted...)})
}
