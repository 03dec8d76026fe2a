package plugin

// WithCloseOnContextDone returns s set to run a direct plugin uninstrumented under wazero's
// close-on-context-done, for BenchmarkInterruption's comparison.
func WithCloseOnContextDone(s Spec) Spec {
	s.closeOnContextDone = true
	return s
}
