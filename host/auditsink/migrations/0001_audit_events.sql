-- 0001: the audit record. One row per message of the audit stream that parsed as an event.
-- See host/auditsink/README.md for every column.
CREATE TABLE audit_events (
	audit_id            text        NOT NULL,
	trace_id            text        NOT NULL,
	time                timestamptz NOT NULL,
	kind                text        NOT NULL,
	gateway             text,
	transport           text,
	method              text,
	server              text,
	tool                text,
	session             text,
	agent               text,
	request_id          text,
	action              text,
	requested_action    text,
	reason              text,
	rule                text,
	stage               text,
	risk_score          double precision,
	risk_level          text,
	shadow_action       text,
	shadow_rule         text,
	shadow_stage        text,
	latency_us          bigint,
	upstream_status     integer,
	upstream_latency_us bigint,
	upstream_error      text,
	bundle_name         text,
	bundle_version      text,
	bundle_digest       text,
	arguments_sha256    text,
	token_sha256        text,
	principal_issuer    text,
	principal_subject   text,
	principal_client_id text,
	principal           jsonb,
	approval_id         text,
	approval_decision   text,
	approval_decided_by text,
	decision_id         text,
	stages              jsonb,
	event               jsonb       NOT NULL,
	verified            boolean     NOT NULL,
	verify_problem      text,
	signer              text,
	subject             text        NOT NULL,
	stream_seq          bigint      NOT NULL,
	stored_at           timestamptz NOT NULL DEFAULT now(),
	CHECK (verified = (verify_problem IS NULL))
);

-- Exactly once: a trusted event is stored once per audit id, whatever JetStream redelivers or a
-- publisher replays. An event that failed verification never takes a trusted event's id: it is
-- kept once per stream message beside it.
CREATE UNIQUE INDEX audit_events_trusted_id ON audit_events (audit_id) WHERE verified;
CREATE UNIQUE INDEX audit_events_untrusted_msg ON audit_events (audit_id, stream_seq) WHERE NOT verified;

-- The questions `palisade audit query` answers: by time range, then by action, rule, tool,
-- server and principal; a call's story by trace id or decision id; retention by time.
CREATE INDEX audit_events_time ON audit_events (time);
CREATE INDEX audit_events_action_time ON audit_events (action, time);
CREATE INDEX audit_events_rule_time ON audit_events (rule, time) WHERE rule IS NOT NULL;
CREATE INDEX audit_events_tool_time ON audit_events (tool, time) WHERE tool IS NOT NULL;
CREATE INDEX audit_events_server_time ON audit_events (server, time) WHERE server IS NOT NULL;
CREATE INDEX audit_events_principal_time ON audit_events (principal_subject, time) WHERE principal_subject IS NOT NULL;
CREATE INDEX audit_events_client_time ON audit_events (principal_client_id, time) WHERE principal_client_id IS NOT NULL;
CREATE INDEX audit_events_trace ON audit_events (trace_id, time);
CREATE INDEX audit_events_decision ON audit_events (decision_id) WHERE decision_id IS NOT NULL;

-- Messages of the audit stream that are not an event at all (not JSON, no id): kept, never
-- dropped, once per stream message.
CREATE TABLE audit_rejects (
	stream_seq  bigint      NOT NULL,
	data_sha256 text        NOT NULL,
	subject     text        NOT NULL,
	problem     text        NOT NULL,
	headers     jsonb,
	data        bytea       NOT NULL,
	received_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (stream_seq, data_sha256)
);
CREATE INDEX audit_rejects_received ON audit_rejects (received_at);
