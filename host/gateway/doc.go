// Package gateway is the composition root: configuration in, running gateway out. It starts NATS
// (embedded or external), the audit publisher, the plugin runtime, the active bundle, the
// decision engine, the HTTP proxy and admin API, and the features registered with
// RegisterFeature; Close stops them in reverse order.
//
// Nothing imports this package except cmd/palisade and tests.
package gateway
