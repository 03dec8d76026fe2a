// Package gateway is the composition root: configuration in, running gateway out. It starts NATS
// (embedded or external), the audit publisher, the plugin runtime, the active bundle, the
// decision engine, the HTTP proxy and admin API, and the features listed in Features; Close
// stops them in reverse order. NewCore builds the parts every mode shares (runtime, host
// functions, LLM judge, models, bundle trust); New and NewLocal (the one-process modes) use it.
//
// Nothing imports this package except cmd/palisade and tests.
package gateway
