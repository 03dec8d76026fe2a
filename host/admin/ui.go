package admin

import (
	"net/http"
	"strings"

	"github.com/added060/palisade/web"
	"github.com/labstack/echo/v4"
)

// UIPath is where the dashboard is served.
const UIPath = "/ui"

// RegisterUI serves the dashboard (web.FS) at /ui without authentication: the page itself holds
// no data and asks for the admin token, which it sends as a bearer token on every API call.
// /ui/config.json tells the page where the admin API lives (apiPrefix).
func RegisterUI(e *echo.Echo, apiPrefix string) {
	files := http.StripPrefix(UIPath+"/", http.FileServerFS(web.FS))
	e.GET(UIPath, func(c echo.Context) error { return c.Redirect(http.StatusFound, UIPath+"/") })
	e.GET(UIPath+"/config.json", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"api": apiPrefix})
	})
	e.GET(UIPath+"/*", func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set(echo.HeaderCacheControl, "no-cache")
		if strings.Contains(c.Request().URL.Path, "..") {
			return Error(c, http.StatusBadRequest, "bad path")
		}
		files.ServeHTTP(c.Response(), c.Request())
		return nil
	})
}
