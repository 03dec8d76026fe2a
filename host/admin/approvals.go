package admin

import (
	"errors"
	"net/http"

	"github.com/added060/palisade/host/approval"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/labstack/echo/v4"
)

// DecisionRequest is the body of POST /approvals/:id/approve and /deny.
type DecisionRequest struct {
	// By is ignored: decided_by is the caller's verified identity (Identity.String), never a
	// typed name. Kept so that old clients' bodies still decode.
	By      string `json:"by"`
	Reason  string `json:"reason"`  // shown to the client on deny
	Scope   string `json:"scope"`   // once (default), session, minutes
	Minutes int    `json:"minutes"` // for scope minutes; 0 = 15
}

// RegisterApprovals adds the held-call queue to g:
//
//	GET  /approvals             {"approvals": [...], "count": n}, oldest first, fleet-wide
//	GET  /approvals/:id         one held call
//	POST /approvals/:id/approve body DecisionRequest → 200 {"id", "action"}
//	POST /approvals/:id/deny    body DecisionRequest → 200 {"id", "action"}
//
// Deciding answers 404 for an unknown id, 409 when it was already decided, 400 for a bad body.
func RegisterApprovals(g *echo.Group, m *approval.Manager) {
	g.GET("/approvals", func(c echo.Context) error {
		l := m.List()
		return c.JSON(http.StatusOK, map[string]any{"approvals": l, "count": len(l)})
	})
	g.GET("/approvals/:id", func(c echo.Context) error {
		p, ok := m.Get(c.Param("id"))
		if !ok {
			return Error(c, http.StatusNotFound, "no held call with that id")
		}
		return c.JSON(http.StatusOK, p)
	})
	decide := func(action string) echo.HandlerFunc {
		return func(c echo.Context) error {
			var r DecisionRequest
			if c.Request().ContentLength != 0 {
				if err := c.Bind(&r); err != nil {
					return Error(c, http.StatusBadRequest, "body must be JSON: {by, reason, scope, minutes}")
				}
			}
			id := c.Param("id")
			who, ok := IdentityFrom(c)
			if !ok {
				return Error(c, http.StatusUnauthorized, "no verified identity")
			}
			// The verified identity, signed into the decision (approval.Decision.Identity).
			err := m.Decide(c.Request().Context(), id, approval.Decision{Action: action, By: who.String(), Identity: who.String(),
				Reason: r.Reason, Scope: r.Scope, Minutes: r.Minutes})
			switch {
			case errors.Is(err, approval.ErrNotFound):
				return Error(c, http.StatusNotFound, err.Error())
			case errors.Is(err, approval.ErrDecided):
				return Error(c, http.StatusConflict, err.Error())
			case errors.Is(err, approval.ErrBadDecision):
				return Error(c, http.StatusBadRequest, err.Error())
			case err != nil:
				return Error(c, http.StatusInternalServerError, err.Error())
			}
			return c.JSON(http.StatusOK, map[string]string{"id": id, "action": action})
		}
	}
	g.POST("/approvals/:id/approve", decide(abi.ActionAllow))
	g.POST("/approvals/:id/deny", decide(abi.ActionDeny))
}
