package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/sdk/go/abi"
)

// stageKey is one stage in one phase.
type stageKey struct{ stage, phase string }

// histogram is palisade_stage_duration_seconds for one stage and phase, summed over actions.
type histogram struct {
	le    []float64 // upper bounds, ascending, +Inf last
	cum   []float64 // cumulative counts
	sum   float64
	count float64
}

// scrapeStages reads the gateway's stage histograms from /metrics.
func scrapeStages(addr string) (map[stageKey]*histogram, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return parseStages(resp.Body)
}

// scrapeGauges reads the named unlabelled gauges from the gateway's /metrics (a name it does
// not serve is an error: the table would show 0 for it).
func scrapeGauges(addr string, names ...string) (map[string]float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || !slices.Contains(names, name) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return nil, fmt.Errorf("metrics: %q: %w", sc.Text(), err)
		}
		out[name] = v
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("metrics: no %s", n)
		}
	}
	return out, sc.Err()
}

// stageMemory is one stage's palisade_stage_linear_memory_bytes and palisade_stage_instances.
type stageMemory struct {
	stage     string
	bytes     float64
	instances int
}

// scrapeStageMemory reads each stage's linear memory and live instances from the gateway's
// /metrics, in the order the gateway lists them.
func scrapeStageMemory(addr string) ([]stageMemory, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out []stageMemory
	at := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(line, "{stage=\"")
		if !ok || (name != "palisade_stage_linear_memory_bytes" && name != "palisade_stage_instances") {
			continue
		}
		stage, val, ok := strings.Cut(rest, "\"} ")
		if !ok {
			return nil, fmt.Errorf("metrics: %q", line)
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return nil, fmt.Errorf("metrics: %q: %w", line, err)
		}
		i, seen := at[stage]
		if !seen {
			i = len(out)
			at[stage] = i
			out = append(out, stageMemory{stage: stage})
		}
		if name == "palisade_stage_instances" {
			out[i].instances = int(f)
		} else {
			out[i].bytes = f
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("metrics: no palisade_stage_linear_memory_bytes")
	}
	return out, nil
}

const (
	stageMetric    = "palisade_stage_duration_seconds"
	overheadMetric = "palisade_gateway_overhead_seconds"
	// overheadStage names the gateway's own time a request (overheadMetric, summed over
	// servers) among the stages; its phase is the metric's path (forwarded, answered).
	overheadStage = "(gateway)"
)

// parseStages parses the Prometheus text format lines of stageMetric, and those of
// overheadMetric as the stage overheadStage.
func parseStages(r io.Reader) (map[stageKey]*histogram, error) {
	out := map[stageKey]*histogram{}
	type bucketKey struct {
		k  stageKey
		le float64
	}
	buckets := map[bucketKey]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		metric := stageMetric
		if strings.HasPrefix(line, overheadMetric) {
			metric = overheadMetric
		} else if !strings.HasPrefix(line, stageMetric) {
			continue
		}
		name, rest, ok := strings.Cut(line, "{")
		if !ok {
			continue
		}
		labels, val, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return nil, fmt.Errorf("metrics: %q: %w", line, err)
		}
		lm := map[string]string{}
		for _, kv := range strings.Split(labels, ",") {
			k, v, _ := strings.Cut(kv, "=")
			lm[k] = strings.Trim(v, `"`)
		}
		k := stageKey{lm["stage"], lm["phase"]}
		if metric == overheadMetric {
			k = stageKey{overheadStage, lm["path"]}
		}
		h := out[k]
		if h == nil {
			h = &histogram{}
			out[k] = h
		}
		switch strings.TrimPrefix(name, metric) {
		case "_bucket":
			le, err := strconv.ParseFloat(lm["le"], 64) // "+Inf" parses to +Inf
			if err != nil {
				return nil, fmt.Errorf("metrics: le %q: %w", lm["le"], err)
			}
			buckets[bucketKey{k, le}] += v
		case "_sum":
			h.sum += v
		case "_count":
			h.count += v
		}
	}
	for bk := range buckets {
		out[bk.k].le = append(out[bk.k].le, bk.le)
	}
	for k, h := range out {
		sort.Float64s(h.le)
		h.cum = make([]float64, len(h.le))
		for i, le := range h.le {
			h.cum[i] = buckets[bucketKey{k, le}]
		}
	}
	return out, sc.Err()
}

// sub returns h minus an earlier scrape of the same histogram (nil = nothing before).
func (h *histogram) sub(before *histogram) *histogram {
	d := &histogram{le: h.le, cum: make([]float64, len(h.cum)), sum: h.sum, count: h.count}
	copy(d.cum, h.cum)
	if before == nil {
		return d
	}
	d.sum -= before.sum
	d.count -= before.count
	for i, le := range h.le {
		for j, ble := range before.le {
			if ble == le {
				d.cum[i] -= before.cum[j]
			}
		}
	}
	return d
}

// quantile interpolates linearly inside the bucket holding q, as Prometheus'
// histogram_quantile does; the result is only as fine as the buckets (10, 25, 50, 100, 250 µs...).
func (h *histogram) quantile(q float64) float64 {
	if h.count <= 0 || len(h.le) == 0 {
		return math.NaN()
	}
	rank := q * h.count
	lo, prev := 0.0, 0.0
	for i, le := range h.le {
		if h.cum[i] >= rank {
			if math.IsInf(le, 1) {
				return lo
			}
			in := h.cum[i] - prev
			if in <= 0 {
				return le
			}
			return lo + (le-lo)*(rank-prev)/in
		}
		lo, prev = le, h.cum[i]
	}
	return lo
}

// stageDelta is the per-stage histogram of one cell: after minus before.
func stageDelta(before, after map[stageKey]*histogram) map[stageKey]*histogram {
	out := map[stageKey]*histogram{}
	for k, h := range after {
		d := h.sub(before[k])
		if d.count > 0 {
			out[k] = d
		}
	}
	return out
}

// isolated times each stage of the bundle by itself in this process: the same plugins, pools
// and host functions as the gateway's (gateway.NewCore, Core.Build), called one at a time with
// an envelope like the one the gateway builds for the load's tools/call echo, for d per stage
// and phase. It returns the p50 per stage and phase.
func isolated(ctx context.Context, bundleDir string, d time.Duration) (map[stageKey][2]time.Duration, error) {
	dataDir, err := os.MkdirTemp("", "palisade-loadgen-isolated-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dataDir)
	core, err := gateway.NewCore(ctx, gateway.CoreOptions{
		Config:   config.Config{DataDir: dataDir, Bundle: bundleDir},
		Sections: gateway.Sections{Bundles: &gateway.BundlesConfig{AllowUnsigned: true}},
		Logger:   slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, err
	}
	defer core.Runtime.Close(ctx)
	b, err := core.Build(ctx, bundleDir, true)
	if err != nil {
		return nil, err
	}
	defer b.Chain.CloseWhenDrained(ctx)
	env := abi.Envelope{
		ABI: abi.Version, ID: "01JLOADGEN0000000000000000", Phase: abi.PhaseRequest, Time: time.Now().UTC().Format(time.RFC3339Nano),
		Transport: "http", Method: "tools/call", RequestID: json.RawMessage("7"), Server: "go-sdk",
		Session: "loadgen-session", ProtocolVersion: "2025-06-18", Client: &abi.Client{Name: "loadgen", Version: "1"},
		Tool: "echo", Arguments: json.RawMessage(`{"message":"load 7"}`),
		Engine: gateway.SelfPaths(config.Config{DataDir: dataDir}.WithDefaults(), nil, nil),
	}
	out := map[stageKey][2]time.Duration{}
	for _, s := range b.Chain.Stages() {
		if s.Plugin == nil {
			continue
		}
		for _, phase := range []string{abi.PhaseRequest, abi.PhaseResponse} {
			if (phase == abi.PhaseRequest && !s.Request) || (phase == abi.PhaseResponse && !s.Response) || !s.Match.Matches(&env) {
				continue
			}
			e := env
			e.Phase = phase
			if phase == abi.PhaseResponse {
				e.Result = json.RawMessage(`{"content":[{"type":"text","text":"Echo: load 7"}]}`)
			}
			if s.NeedsPrior {
				e.Prior = []abi.Prior{{Stage: "rules", Action: abi.ActionAllow, Rule: "allow-echo"}, {Stage: "injection", Action: abi.ActionNone}, {Stage: "detector", Action: abi.ActionNone}}
			}
			in, err := json.Marshal(e)
			if err != nil {
				return nil, err
			}
			if s.View && (!s.NeedsPrior || s.ViewPrior) {
				// What the chain hands a stage that asks for the view (sdk/ABI.md "The view"):
				// layout 2, with the prior, to one that reads earlier verdicts from it.
				prior := e.Prior
				e.Prior = nil
				base, err := json.Marshal(e)
				if err == nil {
					in, err = abi.AppendView(nil, base)
				}
				if err == nil && s.ViewPrior {
					in, err = abi.AppendViewPrior(nil, in, prior)
				}
				if err != nil {
					return nil, fmt.Errorf("stage %s: %w", s.Name, err)
				}
			}
			// Back to back, then one call per millisecond: a call that follows an idle
			// millisecond finds less of the guest's code and data in the CPU's caches, as a
			// served call does after the other stages, the HTTP and the upstream have run.
			var p50 [2]time.Duration
			timeouts := 0
			for i, pause := range []time.Duration{0, time.Millisecond} {
				var lat []time.Duration
				for end := time.Now().Add(d); time.Now().Before(end); {
					t := time.Now()
					if _, err := s.Plugin.Evaluate(ctx, in); err != nil {
						// A call stopped at the stage's deadline on a busy machine is a
						// measurement (timed at the deadline, counted below), not a failed run.
						if !errors.Is(err, plugin.ErrTimeout) {
							return nil, fmt.Errorf("stage %s: %w", s.Name, err)
						}
						timeouts++
					}
					lat = append(lat, time.Since(t))
					time.Sleep(pause)
				}
				slices.Sort(lat)
				p50[i] = lat[len(lat)/2]
			}
			if timeouts > 0 {
				fmt.Printf("isolated: %d calls of stage %s (%s) stopped at its timeout; timed at the deadline\n", timeouts, s.Name, phase)
			}
			out[stageKey{s.Name, phase}] = p50
		}
	}
	return out, nil
}
