package admin

import (
	"errors"
	"net/http"

	"github.com/added060/palisade/host/bundle"
	"github.com/labstack/echo/v4"
)

// BundleList is GET /bundles.
type BundleList struct {
	Active  *bundle.Entry  `json:"active"`  // null when none is active
	History []bundle.Entry `json:"history"` // kept bundles, newest first
}

// BundleResult answers activate, rollback and upload.
type BundleResult struct {
	Bundle  bundle.Entry `json:"bundle"`
	Changed bool         `json:"changed"` // false: that bundle was already active
}

// BundleError is the error body of a bundle that failed verification or its self-test.
type BundleError struct {
	Error  string `json:"error"`
	Reason string `json:"reason"` // bundle.RejectReason: tampered, bad_signature, fixture_failed, ...
}

// ActivateRequest is POST /bundles/activate: a kept bundle's version or digest prefix.
type ActivateRequest struct {
	Version string `json:"version"`
}

// RegisterBundles adds the bundle routes to s:
//
//	GET  /bundles           active bundle and kept history
//	GET  /bundles/active    the active bundle (404 when none)
//	POST /bundles           upload a bundle archive (.tar.gz body) and activate it
//	POST /bundles/activate  {"version": "..."}: activate a kept bundle by version or digest
//	POST /bundles/rollback  go back to the bundle active before the current one
//
// A bundle that fails verification, build or fixtures answers 422 with a BundleError; the
// current bundle keeps serving.
func RegisterBundles(s *Server, m *bundle.Manager) {
	g := s.Group()
	g.GET("/bundles", func(c echo.Context) error {
		l := BundleList{History: m.History()}
		if cur, ok := m.Current(); ok {
			l.Active = &cur
		}
		if l.History == nil {
			l.History = []bundle.Entry{}
		}
		return c.JSON(http.StatusOK, l)
	})
	g.GET("/bundles/active", func(c echo.Context) error {
		cur, ok := m.Current()
		if !ok {
			return Error(c, http.StatusNotFound, "no active bundle")
		}
		return c.JSON(http.StatusOK, cur)
	})
	g.POST("/bundles", func(c echo.Context) error {
		body := http.MaxBytesReader(c.Response(), c.Request().Body, bundle.MaxArchiveBytes)
		e, changed, err := m.ActivateArchive(c.Request().Context(), body, "upload")
		return answer(c, e, changed, err)
	})
	g.POST("/bundles/activate", func(c echo.Context) error {
		var req ActivateRequest
		if err := c.Bind(&req); err != nil || req.Version == "" {
			return Error(c, http.StatusBadRequest, `body must be {"version": "<kept version or digest>"}`)
		}
		e, changed, err := m.ActivateKept(c.Request().Context(), req.Version)
		return answer(c, e, changed, err)
	})
	g.POST("/bundles/rollback", func(c echo.Context) error {
		e, err := m.Rollback(c.Request().Context())
		return answer(c, e, err == nil, err)
	})
}

func answer(c echo.Context, e bundle.Entry, changed bool, err error) error {
	var mbe *http.MaxBytesError
	switch {
	case err == nil:
		return c.JSON(http.StatusOK, BundleResult{Bundle: e, Changed: changed})
	case errors.Is(err, bundle.ErrNotKept):
		return Error(c, http.StatusNotFound, err.Error())
	case errors.Is(err, bundle.ErrNoPrevious):
		return Error(c, http.StatusConflict, err.Error())
	case errors.As(err, &mbe):
		return Error(c, http.StatusRequestEntityTooLarge, err.Error())
	}
	return c.JSON(http.StatusUnprocessableEntity, BundleError{Error: err.Error(), Reason: bundle.RejectReason(err)})
}
