// Package telemetry owns OpenTelemetry tracing for the gateway: it builds a TracerProvider
// that exports spans over OTLP (HTTP or gRPC), and says how W3C trace context is read from a
// client's request and written into an upstream's.
//
// It imports no other package of host/: the proxy, engine and chain take a trace.Tracer or
// read the span in their context, never this package's types.
package telemetry
