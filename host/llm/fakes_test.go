package llm_test

// Fakes of hosted LLM APIs. Each speaks the provider's real wire format over local HTTP
// (JSON and SSE), as documented by OpenAI (chat completions) and Anthropic (messages).

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

const goodAnswer = `{"decision":"deny","confidence":0.9,"reasons":["reads a secret"]}`

// fake is a configurable provider API server.
type fake struct {
	srv   *httptest.Server
	mode  atomic.Value // string
	calls atomic.Int64

	mu       sync.Mutex
	lastBody map[string]any
	lastHdr  http.Header
}

func (f *fake) setMode(m string) { f.mode.Store(m) }
func (f *fake) getMode() string  { return f.mode.Load().(string) }
func (f *fake) URL() string      { return f.srv.URL }

func (f *fake) record(r *http.Request) {
	f.calls.Add(1)
	b, _ := io.ReadAll(r.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	f.mu.Lock()
	f.lastBody, f.lastHdr = m, r.Header.Clone()
	f.mu.Unlock()
}

func (f *fake) body() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastBody
}

func (f *fake) header() http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastHdr
}

func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	for _, e := range events {
		io.WriteString(w, e+"\n\n")
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
}

func jsonReply(w http.ResponseWriter, status int, v string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, v)
}

// newFakeOpenAI serves POST /v1/chat/completions and GET /v1/models.
// Modes: ok, fenced, garbage, refusal, filter, stream, stream-refusal, stream-cut,
// stream-error, 429, 500, 401, hang, empty.
func newFakeOpenAI(t *testing.T, mode string) *fake {
	f := &fake{}
	f.setMode(mode)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		if f.getMode() == "down" {
			jsonReply(w, 503, `{"error":{"message":"maintenance","type":"server_error"}}`)
			return
		}
		jsonReply(w, 200, `{"object":"list","data":[{"id":"gpt-test","object":"model"}]}`)
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		f.record(r)
		msg := func(content, refusal, finish string) string {
			c, _ := json.Marshal(content)
			if content == "" {
				c = []byte("null")
			}
			rf := "null"
			if refusal != "" {
				b, _ := json.Marshal(refusal)
				rf = string(b)
			}
			return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":%s,"refusal":%s},"logprobs":null,"finish_reason":%q}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, c, rf, finish)
		}
		chunk := func(delta string, finish string) string {
			fr := "null"
			if finish != "" {
				fr = `"` + finish + `"`
			}
			return fmt.Sprintf(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}]}`, delta, fr)
		}
		split := func(s string) []string {
			var out []string
			for i := 0; i < len(s); i += 7 {
				j := min(i+7, len(s))
				b, _ := json.Marshal(s[i:j])
				out = append(out, chunk(`{"content":`+string(b)+`}`, ""))
			}
			return out
		}
		switch f.getMode() {
		case "ok":
			jsonReply(w, 200, msg(goodAnswer, "", "stop"))
		case "allow":
			jsonReply(w, 200, msg(`{"decision":"allow","confidence":0.8,"reasons":["benign read"]}`, "", "stop"))
		case "fenced":
			jsonReply(w, 200, msg("```json\n"+goodAnswer+"\n```", "", "stop"))
		case "garbage":
			jsonReply(w, 200, msg("Sure! I think this is fine. decision: allow", "", "stop"))
		case "refusal":
			jsonReply(w, 200, msg("", "I'm sorry, I can't help with that.", "stop"))
		case "filter":
			jsonReply(w, 200, msg("", "", "content_filter"))
		case "empty":
			jsonReply(w, 200, `{"id":"x","object":"chat.completion","choices":[]}`)
		case "stream":
			ev := []string{chunk(`{"role":"assistant","content":"","refusal":null}`, "")}
			ev = append(ev, split(goodAnswer)...)
			ev = append(ev, chunk(`{}`, "stop"), "data: [DONE]")
			sse(w, ev...)
		case "stream-refusal":
			sse(w, chunk(`{"role":"assistant","content":null,"refusal":""}`, ""),
				chunk(`{"refusal":"I'm sorry, "}`, ""), chunk(`{"refusal":"I can't assist with that."}`, ""),
				chunk(`{}`, "stop"), "data: [DONE]")
		case "stream-cut":
			ev := split(goodAnswer)
			sse(w, ev[:2]...) // connection ends without [DONE]
		case "stream-error":
			sse(w, split(goodAnswer)[0], `data: {"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`)
		case "429":
			w.Header().Set("Retry-After", "7")
			jsonReply(w, 429, `{"error":{"message":"Rate limit reached for gpt-test","type":"requests","code":"rate_limit_exceeded"}}`)
		case "500":
			jsonReply(w, 500, `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`)
		case "401":
			jsonReply(w, 401, `{"error":{"message":"Incorrect API key provided: sk-live-abcdefghijklmnop. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}`)
		case "hang":
			<-r.Context().Done()
		default:
			t.Errorf("fake openai: unknown mode %q", f.getMode())
		}
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// newFakeAnthropic serves POST /v1/messages and GET /v1/models; it answers 401 unless the
// x-api-key and anthropic-version headers are present, as the real API does.
// Modes: ok, refusal, garbage, stream, stream-error, stream-refusal, 529, 500, hang.
func newFakeAnthropic(t *testing.T, mode, wantKey string) *fake {
	f := &fake{}
	f.setMode(mode)
	auth := func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get("x-api-key") != wantKey {
			jsonReply(w, 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
			return false
		}
		if r.Header.Get("anthropic-version") == "" {
			jsonReply(w, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"anthropic-version: header is required"}}`)
			return false
		}
		return true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		if !auth(w, r) {
			return
		}
		jsonReply(w, 200, `{"data":[{"type":"model","id":"claude-test"}],"has_more":false}`)
	})
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		f.record(r)
		if !auth(w, r) {
			return
		}
		msg := func(text, stop string) string {
			b, _ := json.Marshal(text)
			content := `[{"type":"text","text":` + string(b) + `}]`
			if text == "" {
				content = "[]"
			}
			return fmt.Sprintf(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":%s,"stop_reason":%q,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5}}`, content, stop)
		}
		start := `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`
		delta := func(s string) string {
			b, _ := json.Marshal(s)
			return `event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":` + string(b) + `}}`
		}
		switch f.getMode() {
		case "ok":
			jsonReply(w, 200, msg(goodAnswer, "end_turn"))
		case "refusal":
			jsonReply(w, 200, msg("", "refusal"))
		case "garbage":
			jsonReply(w, 200, msg(`{"decision":"allow","confidence":0.99,"reasons":["ok"],"note":"extra"}`, "end_turn"))
		case "stream":
			sse(w, start,
				`event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`event: ping
data: {"type": "ping"}`,
				delta(goodAnswer[:20]), delta(goodAnswer[20:]),
				`event: content_block_stop
data: {"type":"content_block_stop","index":0}`,
				`event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`,
				`event: message_stop
data: {"type":"message_stop"}`)
		case "stream-refusal":
			sse(w, start, `event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, delta(`{"decision":"al`),
				`event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"refusal","stop_sequence":null},"usage":{"output_tokens":3}}`,
				`event: message_stop
data: {"type":"message_stop"}`)
		case "stream-error":
			sse(w, start, `event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, delta(`{"decision"`), `event: error
data: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}`)
		case "529":
			jsonReply(w, 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		case "500":
			jsonReply(w, 500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`)
		case "hang":
			<-r.Context().Done()
		default:
			t.Errorf("fake anthropic: unknown mode %q", f.getMode())
		}
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
