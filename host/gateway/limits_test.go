package gateway_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/nats-io/nats.go"
)

// Work outside the bounds (issue 20, part 3), each against a real `palisade serve`: a batch's
// element count (limits.batch_elements) and one upstream exchange's total time
// (limits.upstream_total_timeout).

// startUpstream serves h on loopback and returns its /mcp URL.
func startUpstream(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	up := &http.Server{Handler: h}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go up.Serve(l)
	t.Cleanup(func() { up.Close() })
	return "http://" + l.Addr().String() + "/mcp"
}

// postMCP posts body to the gateway's /mcp and returns the status and answer.
func postMCP(t *testing.T, s *served, body string, timeout time.Duration) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	c := http.Client{Timeout: timeout}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func pings(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)
	}
	b.WriteByte(']')
	return b.String()
}

// TestBatchElementsLimit: one POST of 20,000 batched pings is refused whole, naming the limit,
// before anything reaches the upstream (it was 20,000 upstream requests); a batch at the
// default limit of 100 is served.
func TestBatchElementsLimit(t *testing.T) {
	var forwarded atomic.Int64
	url := startUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		var m struct{ ID json.RawMessage }
		json.NewDecoder(r.Body).Decode(&m)
		forwarded.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
	})
	s := serveProcess(t, url, "")
	start := time.Now()
	st, b := postMCP(t, s, pings(20000), 2*time.Minute)
	if st != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "limits.batch_elements") || !strings.Contains(string(b), "-32003") {
		t.Fatalf("20,000 pings: %d %.300s", st, b)
	}
	if n := forwarded.Load(); n != 0 {
		t.Fatalf("a refused batch sent %d requests upstream", n)
	}
	t.Logf("20,000 batched pings refused in %s: %s", time.Since(start).Round(time.Millisecond), b)
	st, b = postMCP(t, s, pings(100), 2*time.Minute)
	var answers []json.RawMessage
	if st != http.StatusOK || json.Unmarshal(b, &answers) != nil || len(answers) != 100 {
		t.Fatalf("100 pings: %d %.300s", st, b)
	}
	if n := forwarded.Load(); n != 100 {
		t.Fatalf("100 pings sent %d requests upstream", n)
	}
}

// TestUpstreamTotalTimeout: an upstream that keeps its answer alive without finishing it (SSE
// keepalive comments, or a JSON body a byte at a time) never trips the idle timeout; after
// limits.upstream_total_timeout the client gets a -32002 error naming the limit, and the audit
// event records it.
func TestUpstreamTotalTimeout(t *testing.T) {
	for _, tc := range []struct {
		name   string
		send   func(w http.ResponseWriter, r *http.Request)
		status int
	}{
		{"sse comments", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			for {
				if _, err := io.WriteString(w, ": keepalive\n\n"); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}, http.StatusOK},
		{"json a byte at a time", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "100000")
			w.WriteHeader(http.StatusOK)
			for {
				if _, err := io.WriteString(w, " "); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}, http.StatusGatewayTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := startUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				tc.send(w, r)
			})
			s := serveProcess(t, url, "limits: {upstream_total_timeout: 2s, upstream_idle_timeout: 5m}\n")
			nc, err := nats.Connect(s.nats)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			events := make(chan *nats.Msg, 64)
			sub, err := nc.ChanSubscribe(audit.SubjectPrefix+".>", events)
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Unsubscribe()
			nc.Flush()

			start := time.Now()
			st, b := postMCP(t, s, callEcho, 60*time.Second)
			took := time.Since(start)
			if st != tc.status || !strings.Contains(string(b), "-32002") || !strings.Contains(string(b), "limits.upstream_total_timeout") {
				t.Fatalf("after %s: %d %.400s", took, st, b)
			}
			t.Logf("answered after %s: %d %s", took.Round(time.Millisecond), st, strings.TrimSpace(string(b)))
			deadline := time.After(30 * time.Second)
			for {
				select {
				case m := <-events:
					var ev audit.Event
					if json.Unmarshal(m.Data, &ev) == nil && ev.Upstream != nil && strings.Contains(ev.Upstream.Error, "limits.upstream_total_timeout") {
						return
					}
				case <-deadline:
					t.Fatal("no audit event records the total timeout")
				}
			}
		})
	}
}
