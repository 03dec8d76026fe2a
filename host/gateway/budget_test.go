package gateway_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Memory budget, send timeout and connection limit against a real `palisade serve` (issue 11
// item 3, second round): JSON answers and request bodies draw from limits.stream_buffer_bytes,
// a client that stops reading is cut after http.send_timeout, and past http.max_connections
// /healthz still answers.

const callEcho = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`

// bigAnswer is a JSON-RPC answer to id 1 of exactly n bytes.
func bigAnswer(n int) string {
	head, tail := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`, `"}]}}`
	return head + strings.Repeat("a", n-len(head)-len(tail)) + tail
}

// TestJSONAnswersShareBudget: 16 clients at once each get a 4 MiB JSON answer. With a 16 MiB
// budget only as many answers as fit are read at once (the upstream holds each answer's last
// byte until the others were refused): the rest get a JSON-RPC error, never the answer
// unjudged. With a roomy budget all 16 pass. RSS is logged for both.
func TestJSONAnswersShareBudget(t *testing.T) {
	const size = 4 << 20
	answer := bigAnswer(size)
	for _, tc := range []struct {
		name   string
		budget int64
		hold   bool // the upstream holds the last byte until the test releases it
		passes int
	}{{"16 MiB budget", 16 << 20, true, 4}, {"256 MiB budget", 256 << 20, false, 16}} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", fmt.Sprint(len(answer)))
				w.WriteHeader(http.StatusOK)
				io.WriteString(w, answer[:len(answer)-1])
				w.(http.Flusher).Flush()
				if tc.hold {
					select {
					case <-release:
					case <-r.Context().Done(): // the gateway refused the answer
						return
					}
				}
				io.WriteString(w, answer[len(answer)-1:])
			})}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go up.Serve(l)
			t.Cleanup(func() { up.Close() })
			s := serveProcess(t, "http://"+l.Addr().String()+"/mcp",
				fmt.Sprintf("limits: {response_bytes: %d, stream_buffer_bytes: %d}\n", 8<<20, tc.budget))
			base, _ := s.memKiB(t)

			var passed, refused, other atomic.Int32
			var wg sync.WaitGroup
			for range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req, _ := http.NewRequest(http.MethodPost, s.base+"/mcp", strings.NewReader(callEcho))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					c := http.Client{Timeout: 2 * time.Minute}
					resp, err := c.Do(req)
					if err != nil {
						other.Add(1)
						t.Error(err)
						return
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					switch {
					case resp.StatusCode == http.StatusOK && string(b) == answer:
						passed.Add(1)
					case resp.StatusCode == http.StatusBadGateway && strings.Contains(string(b), "memory budget") && len(b) < 4096:
						refused.Add(1)
					default:
						other.Add(1)
						t.Errorf("answer %d, %d bytes: %.200s", resp.StatusCode, len(b), b)
					}
				}()
			}
			if tc.hold {
				deadline := time.Now().Add(90 * time.Second)
				for int(refused.Load()+other.Load()) < 16-tc.passes && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				close(release)
			}
			wg.Wait()
			if int(passed.Load()) != tc.passes || int(refused.Load()) != 16-tc.passes {
				t.Errorf("%d answers passed and %d were refused, want %d and %d", passed.Load(), refused.Load(), tc.passes, 16-tc.passes)
			}
			s.mustBeHealthy(t, "after 16 large answers")
			rss, peak := s.memKiB(t)
			t.Logf("16 x %d MiB JSON answers, budget %d MiB: %d passed, %d refused; gateway RSS %d MiB before, %d MiB after, peak %d MiB",
				size>>20, tc.budget>>20, passed.Load(), refused.Load(), base>>10, rss>>10, peak>>10)
			// A passed answer is held a few times over while it is judged and written.
			if bound := base + tc.passes*6*size>>10 + 64<<10; peak > bound {
				t.Errorf("peak RSS %d KiB over the bound %d KiB", peak, bound)
			}
		})
	}
}

// TestRequestBodiesShareBudget: 16 clients announce 4 MiB bodies and send only the start.
// With a 16 MiB budget, the bodies that fit are read (and wait); the others are refused at
// once with 503 and a JSON-RPC error. Once the waiting clients go, the budget is whole again.
func TestRequestBodiesShareBudget(t *testing.T) {
	up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go up.Serve(l)
	t.Cleanup(func() { up.Close() })
	const size = 4 << 20
	s := serveProcess(t, "http://"+l.Addr().String()+"/mcp",
		fmt.Sprintf("limits: {body_bytes: %d, stream_buffer_bytes: %d}\nhttp: {read_timeout: 2m}\n", size, 16<<20))
	addr := strings.TrimPrefix(s.base, "http://")
	statuses := make(chan int, 16)
	var conns []net.Conn
	for range 16 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n{\"jsonrpc\":\"2.0\",", size)
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				statuses <- -1 // closed unanswered: the test hung up
				return
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode == http.StatusServiceUnavailable && !strings.Contains(string(b), "memory budget") {
				t.Errorf("503 without the budget error: %s", b)
			}
			statuses <- resp.StatusCode
		}()
	}
	refused := 0
	timeout := time.After(90 * time.Second)
	for refused < 12 {
		select {
		case st := <-statuses:
			if st != http.StatusServiceUnavailable {
				t.Fatalf("a body announced while the budget is taken got %d, want 503", st)
			}
			refused++
		case <-timeout:
			t.Fatalf("%d of 16 bodies refused, want 12 (4 fit the budget)", refused)
		}
	}
	s.mustBeHealthy(t, "with the budget taken")
	for _, c := range conns {
		c.Close()
	}
	// The budget is whole again: full bodies of 3 MiB are served one after another (the
	// waiting bodies' reads end when their clients go; poll until the first passes).
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + strings.Repeat("b", 3<<20) + `"}}}`
	deadline := time.Now().Add(60 * time.Second)
	for served := 0; served < 8; {
		req, _ := http.NewRequest(http.MethodPost, s.base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK:
			served++
		case served > 0 || time.Now().After(deadline):
			t.Fatalf("body %d after the clients went: %d (budget not given back)", served, resp.StatusCode)
		default:
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// TestStalledClientIsCut: a client posts a call and never reads its SSE answer while the
// upstream keeps sending. After http.send_timeout the gateway's write fails, so it ends the
// client's connection and the upstream stream instead of blocking on them forever.
func TestStalledClientIsCut(t *testing.T) {
	var sent atomic.Int64
	upClosed := make(chan struct{})
	up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		ev := "event: message\ndata: " + `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("n", 64<<10) + `"}}` + "\n\n"
		for {
			if _, err := io.WriteString(w, ev); err != nil {
				close(upClosed) // the gateway hung up
				return
			}
			w.(http.Flusher).Flush()
			sent.Add(int64(len(ev)))
		}
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go up.Serve(l)
	t.Cleanup(func() { up.Close() })
	s := serveProcess(t, "http://"+l.Addr().String()+"/mcp", "http: {send_timeout: 1s}\n")
	base, _ := s.memKiB(t)
	c, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetReadBuffer(64 << 10) // a small window, so the gateway's writes block soon
	}
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(callEcho), callEcho)
	// The client reads nothing now.
	select {
	case <-upClosed:
	case <-time.After(90 * time.Second):
		t.Fatalf("the gateway still relays to a client that stopped reading (%d MiB sent upstream)", sent.Load()>>20)
	}
	s.mustBeHealthy(t, "after cutting the stalled client")
	// What the gateway had written before the cut is there, then the connection ends.
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	n, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the gateway kept the stalled client's connection open (%d bytes read)", n)
	}
	rss, peak := s.memKiB(t)
	t.Logf("stalled client: upstream sent %d MiB before the cut; client had %d KiB waiting; gateway RSS %d MiB before, %d MiB after, peak %d MiB",
		sent.Load()>>20, n>>10, base>>10, rss>>10, peak>>10)
}

// TestConnectionLimitKeepsHealthz: with every slot of http.max_connections held, 200 more
// clients get 503 at once rather than waiting, /healthz keeps answering 200, and the gateway
// holds no more descriptors than the limit plus the refusals being answered.
func TestConnectionLimitKeepsHealthz(t *testing.T) {
	up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go up.Serve(l)
	t.Cleanup(func() { up.Close() })
	const limit = 32
	s := serveProcess(t, "http://"+l.Addr().String()+"/mcp", fmt.Sprintf("http: {max_connections: %d, read_header_timeout: 5m}\n", limit))
	addr := strings.TrimPrefix(s.base, "http://")
	baseFDs := s.fds()
	var held []net.Conn
	for range limit {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	// Every slot is taken once the gateway holds the held connections' descriptors.
	deadline := time.Now().Add(30 * time.Second)
	for s.fds() < baseFDs+limit && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	noKeepAlive := func() *http.Client {
		return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	}
	var wg sync.WaitGroup
	var unavailable, otherStatus atomic.Int32
	sem := make(chan struct{}, 32) // 32 at a time: the kernel's accept queue is not under test
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			req, _ := http.NewRequest(http.MethodPost, s.base+"/mcp", strings.NewReader(callEcho))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := noKeepAlive().Do(req)
			if err != nil {
				otherStatus.Add(1) // closed unanswered (more than 256 refusals at once) or not connected
				t.Logf("past the limit: %v", err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable {
				unavailable.Add(1)
			} else {
				otherStatus.Add(1)
				t.Logf("past the limit: %d", resp.StatusCode)
			}
		}()
	}
	maxFDs := 0
	for i := range 10 {
		resp, err := noKeepAlive().Get(s.base + "/healthz")
		if err != nil {
			t.Fatalf("/healthz %d with every slot held: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/healthz %d with every slot held: %d", i, resp.StatusCode)
		}
		maxFDs = max(maxFDs, s.fds())
	}
	wg.Wait()
	if unavailable.Load() == 0 {
		t.Errorf("no client past the limit got 503 (%d other outcomes)", otherStatus.Load())
	}
	if f := maxFDs - baseFDs; f > limit+256+64 {
		t.Errorf("the gateway held %d descriptors over its base past a limit of %d", f, limit)
	}
	t.Logf("%d slots held: 200 clients past the limit got %d x 503 and %d other outcomes; /healthz answered 10/10; descriptors over base at most %d",
		limit, unavailable.Load(), otherStatus.Load(), maxFDs-baseFDs)
	for _, c := range held {
		c.Close()
	}
	servedAgain(t, noKeepAlive(), s.base+"/mcp", callEcho)
}

// TestBatchElementStreamIsNotCollected: a batch element whose upstream streams 128 MiB of
// notifications before its answer costs the gateway one message at a time, not the stream:
// only the answer is kept for the batch's array.
func TestBatchElementStreamIsNotCollected(t *testing.T) {
	const events = 2048
	up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		note := "event: message\ndata: " + `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("n", 64<<10) + `"}}` + "\n\n"
		for range events {
			if _, err := io.WriteString(w, note); err != nil {
				return
			}
		}
		io.WriteString(w, "event: message\ndata: "+`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}`+"\n\n")
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go up.Serve(l)
	t.Cleanup(func() { up.Close() })
	s := serveProcess(t, "http://"+l.Addr().String()+"/mcp", "")
	base, _ := s.memKiB(t)
	req, _ := http.NewRequest(http.MethodPost, s.base+"/mcp", strings.NewReader("["+callEcho+"]"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	c := http.Client{Timeout: 2 * time.Minute}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"done"`) || len(b) > 4096 {
		t.Fatalf("batch answer %d: %.300s", resp.StatusCode, b)
	}
	rss, peak := s.memKiB(t)
	t.Logf("batch element with %d MiB of notifications: gateway RSS %d MiB before, %d MiB after, peak %d MiB", events>>4, base>>10, rss>>10, peak>>10)
	if bound := base + 64<<10; peak > bound {
		t.Errorf("peak RSS %d KiB over the bound %d KiB (the stream was collected)", peak, bound)
	}
}
