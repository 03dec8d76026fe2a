package admin

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/engine"
	"github.com/labstack/echo/v4"
)

// ShadowJudge is what the shadow routes read: host/engine.Shadow implements it.
type ShadowJudge interface {
	Stats() engine.ShadowStats
	Disagreements(limit int) []engine.Disagreement
}

// ShadowStatus is GET /bundles/shadow.
type ShadowStatus struct {
	Shadow *bundle.Entry      `json:"shadow"` // null when none is loaded
	Active *bundle.Entry      `json:"active"` // null when none is active
	Stats  engine.ShadowStats `json:"stats"`
}

// ShadowDisagreements is GET /shadow/disagreements.
type ShadowDisagreements struct {
	Stats         engine.ShadowStats    `json:"stats"`
	Disagreements []engine.Disagreement `json:"disagreements"` // newest first
}

// DefaultDisagreementsLimit is how many disagreements GET /shadow/disagreements returns
// without ?limit=.
const DefaultDisagreementsLimit = 100

// RegisterShadow adds the shadow bundle routes to s:
//
//	GET    /bundles/shadow          the shadow bundle, the active one and the shadow's counters
//	PUT    /bundles/shadow          load a bundle archive (.tar.gz body) as the shadow
//	DELETE /bundles/shadow          clear the shadow (404 when none)
//	POST   /bundles/shadow/promote  make the shadow the active bundle (signed activation path)
//	GET    /shadow/disagreements    recent calls the shadow would have decided otherwise
//	                                (?limit=N, default 100, 0 = all kept; newest first)
//
// A shadow that fails verification, build or fixtures answers 422 with a BundleError (reason
// bad_signature, tampered, ...); the current shadow, if any, keeps judging. A promote refused
// by the sequence check answers 422 with reason older_sequence.
func RegisterShadow(s *Server, m *bundle.Manager, j ShadowJudge) {
	g := s.Group()
	g.GET("/bundles/shadow", func(c echo.Context) error {
		st := ShadowStatus{Stats: j.Stats()}
		if e, ok := m.Shadow(); ok {
			st.Shadow = &e
		}
		if e, ok := m.Current(); ok {
			st.Active = &e
		}
		return c.JSON(http.StatusOK, st)
	})
	g.PUT("/bundles/shadow", func(c echo.Context) error {
		body := http.MaxBytesReader(c.Response(), c.Request().Body, bundle.MaxArchiveBytes)
		e, changed, err := m.LoadShadowArchive(c.Request().Context(), body, "upload")
		return answer(c, e, changed, err)
	})
	g.DELETE("/bundles/shadow", func(c echo.Context) error {
		e, err := m.ClearShadow(c.Request().Context())
		if errors.Is(err, bundle.ErrNoShadow) {
			return Error(c, http.StatusNotFound, err.Error())
		}
		return answer(c, e, err == nil, err)
	})
	g.POST("/bundles/shadow/promote", func(c echo.Context) error {
		e, changed, err := m.PromoteShadow(c.Request().Context())
		if errors.Is(err, bundle.ErrNoShadow) {
			return Error(c, http.StatusNotFound, err.Error())
		}
		return answer(c, e, changed, err)
	})
	g.GET("/shadow/disagreements", func(c echo.Context) error {
		limit := DefaultDisagreementsLimit
		if q := c.QueryParam("limit"); q != "" {
			n, err := strconv.Atoi(q)
			if err != nil || n < 0 {
				return Error(c, http.StatusBadRequest, "limit must be a non-negative integer")
			}
			limit = n
		}
		return c.JSON(http.StatusOK, ShadowDisagreements{Stats: j.Stats(), Disagreements: j.Disagreements(limit)})
	})
}
