package proxy

import (
	"bytes"

	"github.com/added060/palisade/host/internal/sse"
	"github.com/added060/palisade/host/mcp"
)

// answerInStream returns the JSON-RPC response inside a whole SSE body, if any.
func answerInStream(b []byte) []byte {
	r := sse.NewReader(bytes.NewReader(b), len(b)+1)
	var last []byte
	for {
		ev, err := r.Next()
		if err != nil {
			return last
		}
		if m, err := mcp.ParseMessage(ev.Data); err == nil && m.IsResponse() {
			last = ev.Data
		}
	}
}
