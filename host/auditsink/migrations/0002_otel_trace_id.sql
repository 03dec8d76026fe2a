-- The W3C trace id of the OpenTelemetry trace a call's span belongs to (the event's trace_id
-- field, host/telemetry), beside trace_id, which is the call's audit id (MCP Observatory's
-- mcp_traces trace id: the call a row belongs to). NULL when the gateway did not trace.
ALTER TABLE audit_events ADD COLUMN otel_trace_id text;
UPDATE audit_events SET otel_trace_id = event->>'trace_id' WHERE event ? 'trace_id';
CREATE INDEX audit_events_otel_trace ON audit_events (otel_trace_id) WHERE otel_trace_id IS NOT NULL;
