package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"mime"
	"net/http"

	"github.com/added060/palisade/host/mcp"
)

// mediaType returns the lower-cased media type of a Content-Type header ("" when absent or
// malformed): "Text/Event-Stream; charset=utf-8" is text/event-stream.
func mediaType(h http.Header) string {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

// idKey is a JSON-RPC id as a value: strings by their decoded text, numbers by their numeric
// value (1, 1.0 and 1e0 are one id; "1" is another), so an answer cannot dodge the judge by
// spelling the id differently from the request while a client still matches it.
func idKey(id json.RawMessage) string {
	t := bytes.TrimSpace(id)
	if len(t) == 0 {
		return ""
	}
	if k, ok := smallIntKey(t); ok {
		return k
	}
	switch c := t[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(t, &s) == nil {
			return "s:" + s
		}
	case c == '-' || (c >= '0' && c <= '9'):
		if f, _, err := big.ParseFloat(string(t), 10, 256, big.ToNearestEven); err == nil {
			if f.Sign() == 0 {
				return "n:0"
			}
			return "n:" + f.Text('g', -1)
		}
	}
	return "r:" + string(t)
}

// smallIntKey is idKey's answer for the ids clients send almost always, a plain integer of at
// most six digits without a leading zero ("7", "-42", "123456"), without math/big: such a
// number's shortest %g form is its own digits, so "n:" plus the literal is what the general
// path returns ("-0" is "n:0"). TestSmallIntKey compares both paths.
func smallIntKey(t []byte) (string, bool) {
	d := t
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 6 || (d[0] == '0' && len(d) > 1) {
		return "", false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	if d[0] == '0' {
		return "n:0", true
	}
	return "n:" + string(t), true
}

// sameID reports whether two JSON-RPC ids are the same value (see idKey). Byte-identical ids,
// the usual case of an answer to a request, need no decoding.
func sameID(a, b json.RawMessage) bool {
	if ta, tb := bytes.TrimSpace(a), bytes.TrimSpace(b); len(ta) > 0 && bytes.Equal(ta, tb) {
		return true
	}
	return idKey(a) == idKey(b)
}

// upstreamMessages splits what an upstream sent as one body or one SSE event into messages:
// a batch array becomes its elements. Every message is refused if any object in data holds a
// key twice or in two cases (ErrAmbiguousKeys); an element that is not a JSON-RPC message is
// returned with its parse error, so the caller can apply the failure mode to it. A batch of
// more than maxBatch elements (0 = no limit) is refused whole (mcp.ErrBatchTooLarge): the
// caller answers the waiting request with an error instead of judging every element.
func upstreamMessages(data []byte, maxBatch int) ([]upstreamMessage, error) {
	t := bytes.TrimSpace(data)
	if err := AmbiguousKeys(t); err != nil {
		return nil, err
	}
	if len(t) > 0 && t[0] == '[' {
		var els []json.RawMessage
		if err := json.Unmarshal(t, &els); err != nil {
			return nil, fmt.Errorf("%w: %v", mcp.ErrNotJSON, err)
		}
		if maxBatch > 0 && len(els) > maxBatch {
			return nil, fmt.Errorf("%w: the upstream sent %d messages in one batch, over the gateway's limit of %d (limits.batch_elements)",
				mcp.ErrBatchTooLarge, len(els), maxBatch)
		}
		out := make([]upstreamMessage, 0, len(els))
		for _, el := range els {
			m, err := StrictMessage(el)
			out = append(out, upstreamMessage{raw: el, msg: m, err: err})
		}
		return out, nil
	}
	m, err := StrictMessage(t)
	return []upstreamMessage{{raw: t, msg: m, err: err}}, nil
}

// upstreamMessage is one message from an upstream, parsed or with the reason it was not.
type upstreamMessage struct {
	raw []byte
	msg *mcp.Message
	err error
}
