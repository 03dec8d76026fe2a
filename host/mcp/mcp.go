package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
)

// HTTP header names, spelled as the MCP specification spells them.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderLastEventID     = "Last-Event-ID"
	// HeaderParamPrefix starts the headers that mirror tools/call arguments (Mcp-Param-{Name},
	// 2026-07-28, for arguments whose inputSchema property carries x-mcp-header).
	HeaderParamPrefix = "Mcp-Param-"
)

// Stateless is the first protocol version without sessions (server/discover, per-request headers).
const Stateless = "2026-07-28"

// JSON-RPC and Palisade error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	CodeRateLimited    = -32000 // the caller is over a rate limit (gateway limits, own MCP server)
	CodeDenied         = -32001 // the chain denied the call
	CodeUpstream       = -32002 // the upstream is down, timed out or answered badly
	CodeTooLarge       = -32003 // the body is over the gateway's limit
	CodeHeaderMismatch = -32004 // Mcp-Method / Mcp-Name / Mcp-Param-* disagree with the body
)

// Message is one JSON-RPC 2.0 message: a request, a notification or a response.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// IsRequest reports whether m is a request (method and id).
func (m *Message) IsRequest() bool { return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" }

// IsNotification reports whether m is a notification (method, no id).
func (m *Message) IsNotification() bool {
	return m.Method != "" && (len(m.ID) == 0 || string(m.ID) == "null")
}

// IsResponse reports whether m is a response (no method).
func (m *Message) IsResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// Error is a JSON-RPC error object.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("json-rpc %d: %s", e.Code, e.Message) }

// DenyData is the data of a CodeDenied error. On the wire its action is always "deny" (the
// call was denied, whatever the chain asked first); requested_action says what the chain asked
// (ask for a call a person denied, sample for one the judge denied), as the audit event does.
type DenyData struct {
	Rule    string `json:"rule,omitempty"`
	Stage   string `json:"stage,omitempty"`
	Reason  string `json:"reason"`
	AuditID string `json:"audit_id"`
	// Action is the action the chain asked for before it was resolved, written as
	// requested_action.
	//
	// # Notes
	//
	// It is not the outcome: that is always deny, and MarshalJSON writes it as action.
	Action string `json:"requested_action,omitempty"`
}

// MarshalJSON writes d with "action": "deny" beside its fields.
func (d DenyData) MarshalJSON() ([]byte, error) {
	type plain DenyData
	return json.Marshal(struct {
		plain
		Final string `json:"action"`
	}{plain(d), "deny"})
}

// NewError returns an error object with optional data.
func NewError(code int, msg string, data any) *Error {
	e := &Error{Code: code, Message: msg}
	if data != nil {
		b, err := json.Marshal(data)
		if err == nil {
			e.Data = b
		}
	}
	return e
}

// ErrorResponse encodes a JSON-RPC error response for id (null when id is empty).
func ErrorResponse(id json.RawMessage, e *Error) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(Message{JSONRPC: "2.0", ID: id, Error: e})
	return b
}

// Parse errors.
var (
	ErrEmpty      = errors.New("mcp: empty body")
	ErrNotJSON    = errors.New("mcp: not JSON")
	ErrBadVersion = errors.New(`mcp: jsonrpc must be "2.0"`)
	ErrNoMethod   = errors.New("mcp: message has neither method nor result/error")
	ErrBadParams  = errors.New("mcp: params must be an object")
	ErrEmptyBatch = errors.New("mcp: empty batch")
	// ErrBatchTooLarge marks a batch with more elements than the reader allows (ParseBodyLimit).
	ErrBatchTooLarge = errors.New("mcp: batch too large")
	ErrBadID         = errors.New("mcp: id must be a string, a number or null")
)
