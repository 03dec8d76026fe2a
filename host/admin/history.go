package admin

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/added060/palisade/host/audit"
)

// HistorySource answers the dashboard's history: the PostgreSQL sink's table
// (auditsink.History) when the gateway runs the sink, otherwise the audit stream
// (audit.StreamHistory). Both are tested against the same events.
type HistorySource interface {
	// Search returns a page of the stored decisions q selects, newest first.
	Search(ctx context.Context, q audit.HistoryQuery) (audit.HistoryPage, error)
	// Event returns one call by audit id; audit.ErrHistoryNotFound when none is stored.
	Event(ctx context.Context, id string) (audit.HistoryDetail, error)
	// Chart counts what q selects per time bucket, grouped by one of audit.HistoryFields.
	Chart(ctx context.Context, q audit.HistoryQuery, by string, bucket time.Duration) (audit.HistoryChart, error)
}

// MaxExportRows is the most events one export writes.
const MaxExportRows = 100000

// MaxChartBuckets is the most buckets a chart's range and bucket width may make.
const MaxChartBuckets = 2000

// RegisterHistory adds the stored history to g (viewer role):
//
//	GET /history             a page of stored decisions (filters below), newest first
//	GET /history/chart       counts per time bucket: by=action|rule|tool|server|principal, bucket=1h
//	GET /history/export      the filter's events, streamed: format=csv (default) or ndjson
//	GET /history/:id         one call: its decision (or held record) and related events
//
// Filters: from, to (RFC 3339, or a duration back from now: 24h), action, rule, tool, server,
// principal (each repeated or comma-separated: any of), q (text in the reason or tool), limit,
// cursor, unverified=true. log (nil = discard) hears of an export cut short.
func RegisterHistory(g *echo.Group, src HistorySource, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g.GET("/history", func(c echo.Context) error {
		q, err := historyQuery(c.QueryParams(), time.Now())
		if err != nil {
			return Error(c, http.StatusBadRequest, err.Error())
		}
		page, err := src.Search(c.Request().Context(), q)
		if err != nil {
			return historyError(c, err)
		}
		return c.JSON(http.StatusOK, page)
	})
	g.GET("/history/chart", func(c echo.Context) error { return historyChart(c, src) })
	g.GET("/history/export", func(c echo.Context) error { return historyExport(c, src, log) })
	g.GET("/history/:id", func(c echo.Context) error {
		d, err := src.Event(c.Request().Context(), c.Param("id"))
		if err != nil {
			return historyError(c, err)
		}
		return c.JSON(http.StatusOK, d)
	})
}

func historyError(c echo.Context, err error) error {
	switch {
	case errors.Is(err, audit.ErrHistoryNotFound):
		return Error(c, http.StatusNotFound, err.Error())
	case errors.Is(err, audit.ErrHistoryCursor):
		return Error(c, http.StatusBadRequest, err.Error())
	}
	return Error(c, http.StatusBadGateway, "history: "+err.Error())
}

// historyQuery reads the filters of a history request.
func historyQuery(v url.Values, now time.Time) (audit.HistoryQuery, error) {
	var q audit.HistoryQuery
	var err error
	if q.From, err = historyTime(v.Get("from"), now); err != nil {
		return q, fmt.Errorf("from: %w", err)
	}
	if q.To, err = historyTime(v.Get("to"), now); err != nil {
		return q, fmt.Errorf("to: %w", err)
	}
	list := func(k string) []string {
		var out []string
		for _, s := range v[k] {
			for p := range strings.SplitSeq(s, ",") {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, p)
				}
			}
		}
		return out
	}
	q.Action, q.Rule, q.Tool, q.Server, q.Principal = list("action"), list("rule"), list("tool"), list("server"), list("principal")
	q.Text = strings.TrimSpace(v.Get("q"))
	q.Cursor = v.Get("cursor")
	if s := v.Get("limit"); s != "" {
		if q.Limit, err = strconv.Atoi(s); err != nil || q.Limit < 0 {
			return q, errors.New("limit must be a non-negative integer")
		}
	}
	if s := v.Get("unverified"); s != "" {
		if q.Unverified, err = strconv.ParseBool(s); err != nil {
			return q, errors.New("unverified must be true or false")
		}
	}
	return q, nil
}

func historyTime(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return audit.ParseSince(s, now)
}

func historyChart(c echo.Context, src HistorySource) error {
	v := c.QueryParams()
	q, err := historyQuery(v, time.Now())
	if err != nil {
		return Error(c, http.StatusBadRequest, err.Error())
	}
	by := v.Get("by")
	if by == "" {
		by = "action"
	}
	if !slices.Contains(audit.HistoryFields, by) {
		return Error(c, http.StatusBadRequest, fmt.Sprintf("by must be one of %s", strings.Join(audit.HistoryFields, ", ")))
	}
	bucket := time.Hour
	if s := v.Get("bucket"); s != "" {
		if bucket, err = time.ParseDuration(s); err != nil || bucket < time.Second {
			return Error(c, http.StatusBadRequest, "bucket must be a duration of at least 1s")
		}
	}
	if !q.From.IsZero() {
		to := q.To
		if to.IsZero() {
			to = time.Now()
		}
		if to.Sub(q.From)/bucket > MaxChartBuckets {
			return Error(c, http.StatusBadRequest, fmt.Sprintf("the range holds more than %d buckets of %s", MaxChartBuckets, bucket))
		}
	}
	ch, err := src.Chart(c.Request().Context(), q, by, bucket)
	if err != nil {
		return historyError(c, err)
	}
	if len(ch.Buckets) > MaxChartBuckets { // an open range: the newest buckets
		ch.Buckets, ch.Truncated = ch.Buckets[len(ch.Buckets)-MaxChartBuckets:], true
	}
	return c.JSON(http.StatusOK, ch)
}

// csvHeader are the columns of a CSV export.
var csvHeader = []string{"time", "audit_id", "kind", "held", "action", "requested_action", "server", "tool", "rule", "stage",
	"reason", "principal", "session", "agent", "latency_us", "risk_score", "shadow_action", "approval", "decided_by",
	"bundle", "verified", "verify_problem"}

func csvRow(e *audit.HistoryEvent) []string {
	var principal, risk, shadow, approval, by, bundle string
	if e.Principal != nil {
		principal = e.Principal.Subject
		if principal == "" {
			principal = e.Principal.ClientID
		}
	}
	var top float64
	for _, s := range e.Stages {
		top = max(top, s.Score)
	}
	if top > 0 {
		risk = strconv.FormatFloat(top, 'f', -1, 64)
	}
	if e.Shadow != nil {
		shadow = e.Shadow.Action
	}
	if e.Approval != nil {
		approval, by = e.Approval.Decision, e.Approval.DecidedBy
	}
	if e.Bundle != nil {
		bundle = e.Bundle.Name + "@" + e.Bundle.Version
	}
	return []string{e.Time.UTC().Format(time.RFC3339Nano), e.ID, e.Kind, strconv.FormatBool(e.Held), e.Action, e.RequestedAction,
		e.Server, e.Tool, e.Rule, e.Stage, e.Reason, principal, e.Session, e.Agent, strconv.FormatInt(e.LatencyUS, 10), risk,
		shadow, approval, by, bundle, strconv.FormatBool(e.Verified), e.VerifyProblem}
}

// historyExport streams every event the filter selects (up to MaxExportRows), a page at a
// time, as CSV or ND-JSON.
func historyExport(c echo.Context, src HistorySource, log *slog.Logger) error {
	v := c.QueryParams()
	q, err := historyQuery(v, time.Now())
	if err != nil {
		return Error(c, http.StatusBadRequest, err.Error())
	}
	format := v.Get("format")
	if format == "" {
		format = "csv"
	}
	if format != "csv" && format != "ndjson" {
		return Error(c, http.StatusBadRequest, "format must be csv or ndjson")
	}
	ctx := c.Request().Context()
	q.Limit = audit.MaxHistoryLimit
	page, err := src.Search(ctx, q) // the first page before the header: an error is still JSON
	if err != nil {
		return historyError(c, err)
	}
	w := c.Response()
	if format == "csv" {
		w.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	} else {
		w.Header().Set(echo.HeaderContentType, "application/x-ndjson")
	}
	w.Header().Set(echo.HeaderContentDisposition, `attachment; filename="palisade-history.`+format+`"`)
	w.WriteHeader(http.StatusOK)
	cw := csv.NewWriter(w)
	enc := json.NewEncoder(w)
	if format == "csv" {
		if err := cw.Write(csvHeader); err != nil {
			return nil
		}
	}
	n := 0
	for {
		for i := range page.Events {
			if n == MaxExportRows {
				break
			}
			if format == "csv" {
				err = cw.Write(csvRow(&page.Events[i]))
			} else {
				err = enc.Encode(&page.Events[i])
			}
			if err != nil {
				return nil // the client went away
			}
			n++
		}
		cw.Flush()
		w.Flush()
		if page.Next == "" || n >= MaxExportRows {
			return nil
		}
		q.Cursor = page.Next
		if page, err = src.Search(ctx, q); err != nil {
			log.Warn("history export cut short", "rows", n, "err", err)
			if format == "ndjson" { // the status is sent: say so in the stream
				_ = enc.Encode(map[string]string{"error": "export cut short: " + err.Error()})
			}
			return nil
		}
	}
}
