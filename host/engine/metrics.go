package engine

import (
	"sync"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/plugin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the gateway's Prometheus metrics, on a registry of their own (never the default).
type Metrics struct {
	Registry  *prometheus.Registry
	decisions *prometheus.CounterVec
	stage     *prometheus.HistogramVec
	stageObs  sync.Map // [3]string{stage, phase, action} → prometheus.Observer of stage
	upstream  *prometheus.HistogramVec
	upObs     sync.Map // [2]string{server, outcome} → prometheus.Observer of upstream
	overhead  *prometheus.HistogramVec
	overObs   sync.Map // [2]string{server, path} → prometheus.Observer of overhead
	requests  *prometheus.CounterVec
	// shadow bundle (shadow.go)
	shadowDisagree *prometheus.CounterVec
	shadowDropped  prometheus.Counter
}

// NewMetrics registers the gateway's metrics on a new registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "palisade_decisions_total", Help: "Decisions by final action and upstream.",
		}, []string{"action", "server"}),
		stage: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "palisade_stage_duration_seconds", Help: "Plugin stage call latency.",
			Buckets: []float64{10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 10e-3, 50e-3, 250e-3, 1},
		}, []string{"stage", "phase", "action"}),
		upstream: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "palisade_upstream_duration_seconds", Help: "Upstream round-trip latency (to the first byte for streams).",
			Buckets: prometheus.ExponentialBuckets(100e-6, 2.5, 14),
		}, []string{"server", "outcome"}),
		overhead: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "palisade_gateway_overhead_seconds",
			Help:    "Time an MCP HTTP request spent in the gateway beyond its upstream: from its arrival to its answer sent, less the time spent waiting on the upstream (to its answer's headers, then for its body or each event; path forwarded), or the whole time when the gateway answered itself (path answered: a deny, a limit). Calls held for a person, answered by a fallback tool or streamed by subscriptions/listen are not observed.",
			Buckets: prometheus.ExponentialBuckets(25e-6, 2, 15),
		}, []string{"server", "path"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "palisade_http_requests_total", Help: "MCP HTTP requests by upstream and result.",
		}, []string{"server", "result"}),
		shadowDisagree: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "palisade_shadow_disagreements_total", Help: "Calls the shadow bundle would have decided otherwise than the active one, by both actions and the deciding rule and stage.",
		}, []string{"active_action", "shadow_action", "rule", "stage"}),
		shadowDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "palisade_shadow_dropped_total", Help: "Calls the shadow bundle did not judge because its queue was full.",
		}),
	}
	// The plugins' linear memory is outside the Go heap (host/plugin maps it), so neither Go
	// collector counts it: without this gauge a guest whose heap grows shows only as RSS.
	linear := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "palisade_plugin_linear_memory_bytes", Help: "Linear memory all live plugin instances in this process have grown to.",
	}, func() float64 { return float64(plugin.LinearMemoryBytes()) })
	m.Registry.MustRegister(m.decisions, m.stage, m.upstream, m.overhead, m.requests, m.shadowDisagree, m.shadowDropped, linear,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Decision counts one final decision.
func (m *Metrics) Decision(action, server string) { m.decisions.WithLabelValues(action, server).Inc() }

// Stage observes one stage call; its signature fits chain.Options.OnStage.
// The histogram of each label set is looked up once (stageObs): WithLabelValues hashes the
// labels and takes the vector's lock on every call, ten times a served call.
func (m *Metrics) Stage(stage, phase, action string, d time.Duration, _ error) {
	key := [3]string{stage, phase, action}
	o, ok := m.stageObs.Load(key)
	if !ok {
		o, _ = m.stageObs.LoadOrStore(key, m.stage.WithLabelValues(stage, phase, action))
	}
	o.(prometheus.Observer).Observe(d.Seconds())
}

// Upstream observes one upstream round trip. server is a configured upstream's name, so the
// label sets are few and each histogram is looked up once (as Stage's).
func (m *Metrics) Upstream(server, outcome string, d time.Duration) {
	observer(&m.upObs, m.upstream, server, outcome).Observe(d.Seconds())
}

// Overhead observes the time one HTTP request spent in the gateway beyond its upstream (path
// "forwarded"), or all of it when the gateway answered itself (path "answered"). server is a
// configured upstream's name; each histogram is looked up once (as Stage's).
func (m *Metrics) Overhead(server, path string, d time.Duration) {
	observer(&m.overObs, m.overhead, server, path).Observe(d.Seconds())
}

// observer returns vec's histogram for the labels a and b, looked up in vec once and then
// kept in cache.
func observer(cache *sync.Map, vec *prometheus.HistogramVec, a, b string) prometheus.Observer {
	key := [2]string{a, b}
	o, ok := cache.Load(key)
	if !ok {
		o, _ = cache.LoadOrStore(key, vec.WithLabelValues(a, b))
	}
	return o.(prometheus.Observer)
}

// Request counts one HTTP request by result (ok, denied, error, too_large, ...).
func (m *Metrics) Request(server, result string) { m.requests.WithLabelValues(server, result).Inc() }

// ShadowDisagreement counts one call the shadow bundle would have decided otherwise.
func (m *Metrics) ShadowDisagreement(active, shadow, rule, stage string) {
	m.shadowDisagree.WithLabelValues(active, shadow, rule, stage).Inc()
}

// ShadowDropped counts one call the shadow bundle did not judge (its queue was full).
func (m *Metrics) ShadowDropped() { m.shadowDropped.Inc() }

// StageMemory is one stage's plugin memory: what its live instances' linear memory has grown
// to, how many there are, and the cap of each.
type StageMemory struct {
	Stage     string
	Bytes     int64 // linear memory of the live instances, together
	Instances int64
	MaxBytes  int64 // one instance's cap (memory_pages × 64 KiB)
	Retired   int64 // instances retired near the cap after a call (plugin.Stats.Retired)
	// Convention is how the stage's module runs: "native" (Go code linked into the host, no
	// linear memory), "direct" or "extism" (in wazero).
	Convention string
}

// memoryStats is what a stage's evaluator reports when it is a host/plugin plugin.
type memoryStats interface {
	Stats() *plugin.Stats
	MaxBytes() int64
	Convention() string
}

// ChainMemory lists the memory of every plugin stage of ch (nil: none).
func ChainMemory(ch *chain.Chain) []StageMemory {
	if ch == nil {
		return nil
	}
	var out []StageMemory
	for _, s := range ch.Stages() {
		p, ok := s.Plugin.(memoryStats)
		if !ok {
			continue
		}
		st := p.Stats()
		out = append(out, StageMemory{Stage: s.Name, Bytes: st.LinearBytes.Load(), Instances: st.Instances.Load(), MaxBytes: p.MaxBytes(), Retired: st.Retired.Load(), Convention: p.Convention()})
	}
	return out
}

// WatchStageMemory exports f's stages on every scrape: palisade_stage_linear_memory_bytes,
// palisade_stage_instances and palisade_stage_memory_limit_bytes, each by stage, and
// palisade_stage_info{stage,convention} (native stages have no linear memory). A stage whose
// memory per instance nears its limit is a stage about to trap (a Go guest grows 4 MiB at a
// time): the limit is the bundle's memory_pages.
func (m *Metrics) WatchStageMemory(f func() []StageMemory) {
	m.Registry.MustRegister(stageMemoryCollector(f))
}

var (
	stageLinearDesc = prometheus.NewDesc("palisade_stage_linear_memory_bytes", "Linear memory the live plugin instances of a stage of the active bundle have grown to, together.", []string{"stage"}, nil)
	stageInstDesc   = prometheus.NewDesc("palisade_stage_instances", "Live plugin instances of a stage of the active bundle.", []string{"stage"}, nil)
	stageLimitDesc  = prometheus.NewDesc("palisade_stage_memory_limit_bytes", "The memory cap of one plugin instance of a stage (memory_pages × 64 KiB).", []string{"stage"}, nil)
	stageInfoDesc   = prometheus.NewDesc("palisade_stage_info", "1 per stage of the active bundle; convention is how its module runs: native (Go code linked into the host: the first-party module this build was linked with), direct or extism (in wazero).", []string{"stage", "convention"}, nil)
	stageRetireDesc = prometheus.NewDesc("palisade_stage_instances_retired_total", "Plugin instances of a stage of the active bundle closed after a call because they had grown to three quarters of their memory cap.", []string{"stage"}, nil)
)

type stageMemoryCollector func() []StageMemory

func (stageMemoryCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- stageLinearDesc
	ch <- stageInstDesc
	ch <- stageLimitDesc
	ch <- stageRetireDesc
	ch <- stageInfoDesc
}

func (f stageMemoryCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range f() {
		ch <- prometheus.MustNewConstMetric(stageLinearDesc, prometheus.GaugeValue, float64(s.Bytes), s.Stage)
		ch <- prometheus.MustNewConstMetric(stageInstDesc, prometheus.GaugeValue, float64(s.Instances), s.Stage)
		ch <- prometheus.MustNewConstMetric(stageLimitDesc, prometheus.GaugeValue, float64(s.MaxBytes), s.Stage)
		ch <- prometheus.MustNewConstMetric(stageRetireDesc, prometheus.CounterValue, float64(s.Retired), s.Stage)
		ch <- prometheus.MustNewConstMetric(stageInfoDesc, prometheus.GaugeValue, 1, s.Stage, s.Convention)
	}
}

// WatchAudit exports the audit publisher's counters f reports on every scrape
// (palisade_audit_*): what was acked, spooled, replayed, lost or is still pending, and the
// rechecks of retries after the stream's de-duplication window. An operator alerts on
// palisade_audit_dropped_total and palisade_audit_pending: the record is complete only while
// both stay at zero or fall back to it.
func (m *Metrics) WatchAudit(f func() audit.Stats) {
	m.Registry.MustRegister(auditCollector(f))
}

var auditDescs = [...]struct {
	desc *prometheus.Desc
	kind prometheus.ValueType
	val  func(audit.Stats) float64
}{
	{prometheus.NewDesc("palisade_audit_published_total", "Audit events acked by JetStream, spool replays included.", nil, nil),
		prometheus.CounterValue, func(s audit.Stats) float64 { return float64(s.Published) }},
	{prometheus.NewDesc("palisade_audit_duplicates_total", "Audit events found already stored on a retry (by the stream's de-duplication window or a recheck).", nil, nil),
		prometheus.CounterValue, func(s audit.Stats) float64 { return float64(s.Duplicates) }},
	{prometheus.NewDesc("palisade_audit_rechecks_total", "Reads of the audit stream for events sent without an ack before its de-duplication window.", nil, nil),
		prometheus.CounterValue, func(s audit.Stats) float64 { return float64(s.Rechecks) }},
	{prometheus.NewDesc("palisade_audit_recheck_failed_total", "Rechecks that could not read the stream while connected; the events were sent anyway and may be stored twice.", nil, nil),
		prometheus.CounterValue, func(s audit.Stats) float64 { return float64(s.RecheckFailed) }},
	{prometheus.NewDesc("palisade_audit_spooled_total", "Audit events written to the disk spool (NATS down or the queue full).", nil, nil),
		prometheus.CounterValue, func(s audit.Stats) float64 { return float64(s.Spooled) }},
	{prometheus.NewDesc("palisade_audit_replayed_total", "Audit events published from the disk spool.", nil, nil),
		prometheus.CounterValue, func(s audit.Stats) float64 { return float64(s.Replayed) }},
	{prometheus.NewDesc("palisade_audit_dropped_total", "Audit events lost: a spool write failed, or recorded after Close.", nil, nil),
		prometheus.CounterValue, func(s audit.Stats) float64 { return float64(s.Dropped) }},
	{prometheus.NewDesc("palisade_audit_corrupt_total", "Corrupt spool regions skipped.", nil, nil),
		prometheus.CounterValue, func(s audit.Stats) float64 { return float64(s.Corrupt) }},
	{prometheus.NewDesc("palisade_audit_pending", "Audit events recorded and not yet acked (memory and spool).", nil, nil),
		prometheus.GaugeValue, func(s audit.Stats) float64 { return float64(s.Pending) }},
	{prometheus.NewDesc("palisade_audit_spooling", "1 while new audit events go to the disk spool.", nil, nil),
		prometheus.GaugeValue, func(s audit.Stats) float64 {
			if s.Spooling {
				return 1
			}
			return 0
		}},
}

type auditCollector func() audit.Stats

func (auditCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range auditDescs {
		ch <- d.desc
	}
}

func (f auditCollector) Collect(ch chan<- prometheus.Metric) {
	s := f()
	for _, d := range auditDescs {
		ch <- prometheus.MustNewConstMetric(d.desc, d.kind, d.val(s))
	}
}
