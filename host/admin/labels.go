package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/added060/palisade/host/audit"
)

// LabelSource reads the label events stored (audit.StreamHistory, auditsink.History): only
// those whose signature verified.
type LabelSource interface {
	Labels(ctx context.Context, from time.Time, ref string) ([]audit.HistoryEvent, bool, error)
}

// LabelRequest is the body of POST /history/:id/label.
type LabelRequest struct {
	Verdict string `json:"verdict"` // correct, false_positive, false_negative
	Note    string `json:"note,omitempty"`
}

// MaxLabelNote is the longest note a label keeps.
const MaxLabelNote = 2000

// RegisterLabels adds people's labels on decisions to g (docs/DESIGN.md "Feedback that tunes"):
//
//	POST /history/:id/label   {verdict, note}: label the decision id (approver role)
//	GET  /labels              label events: from (RFC 3339 or 24h), ref (one decision),
//	                          format=json (default) or ndjson (what `palisade tune` reads)
//
// A label is an audit event (kind label) that repeats the decision it names, recorded through
// rec, so it is signed and stored with every other event; the labeller is the verified
// identity, never a name in the body.
func RegisterLabels(g *echo.Group, src HistorySource, labels LabelSource, rec Recorder) {
	g.POST("/history/:id/label", func(c echo.Context) error {
		var r LabelRequest
		if err := json.NewDecoder(http.MaxBytesReader(c.Response(), c.Request().Body, 64<<10)).Decode(&r); err != nil {
			return Error(c, http.StatusBadRequest, "body must be JSON: {verdict, note}: "+err.Error())
		}
		if !slices.Contains(audit.LabelVerdicts, r.Verdict) {
			return Error(c, http.StatusBadRequest, "verdict "+strconv.Quote(r.Verdict)+": want one of "+strings.Join(audit.LabelVerdicts, ", "))
		}
		if len(r.Note) > MaxLabelNote {
			return Error(c, http.StatusBadRequest, "note: longer than 2000 bytes")
		}
		who, ok := IdentityFrom(c)
		if !ok {
			return Error(c, http.StatusUnauthorized, "no verified identity")
		}
		id := c.Param("id")
		d, err := src.Event(c.Request().Context(), id)
		switch {
		case errors.Is(err, audit.ErrHistoryNotFound):
			return Error(c, http.StatusNotFound, "no stored decision with id "+id)
		case err != nil:
			return Error(c, http.StatusBadGateway, err.Error())
		case d.Event.Held || d.Event.Kind != audit.KindDecision:
			return Error(c, http.StatusConflict, id+" is not a decided call (it is "+kindOf(d.Event)+"): a held call is decided by approving or denying it, and that counts as its label")
		case !d.Event.Verified:
			return Error(c, http.StatusConflict, id+" did not verify ("+d.Event.VerifyProblem+"): a label on it would teach tuning from a forged record")
		}
		ev := d.Event.Event
		ev.ID, ev.Time, ev.Kind, ev.Chain = audit.NewID(), time.Now().UTC(), audit.KindLabel, nil
		ev.Label = &audit.Label{Ref: id, Verdict: r.Verdict, By: who.String(), Note: r.Note}
		rec.Record(c.Request().Context(), ev)
		return c.JSON(http.StatusOK, ev)
	})
	g.GET("/labels", func(c echo.Context) error {
		from, err := historyTime(c.QueryParam("from"), time.Now())
		if err != nil {
			return Error(c, http.StatusBadRequest, "from: "+err.Error())
		}
		evs, truncated, err := labels.Labels(c.Request().Context(), from, c.QueryParam("ref"))
		if err != nil {
			return Error(c, http.StatusBadGateway, err.Error())
		}
		switch c.QueryParam("format") {
		case "", "json":
			return c.JSON(http.StatusOK, map[string]any{"labels": evs, "count": len(evs), "truncated": truncated})
		case "ndjson":
			c.Response().Header().Set(echo.HeaderContentType, "application/x-ndjson")
			c.Response().WriteHeader(http.StatusOK)
			enc := json.NewEncoder(c.Response())
			for i := range evs {
				if err := enc.Encode(&evs[i].Event); err != nil {
					return nil
				}
			}
			return nil
		default:
			return Error(c, http.StatusBadRequest, "format: want json or ndjson")
		}
	})
}

func kindOf(e audit.HistoryEvent) string {
	if e.Held {
		return "held"
	}
	return e.Kind
}
