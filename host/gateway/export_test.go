package gateway

import "net/http"

// Handler is the handler Start serves (the guard, the send timeout, the routes): the served
// path without the listener, for BenchmarkServedPath.
func (g *Gateway) Handler() http.Handler { return g.srv.Handler }
