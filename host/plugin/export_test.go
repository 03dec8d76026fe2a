package plugin

// WithCloseOnContextDone returns s set to run a direct plugin uninstrumented under wazero's
// close-on-context-done, for BenchmarkInterruption's comparison.
func WithCloseOnContextDone(s Spec) Spec {
	s.closeOnContextDone = true
	return s
}

// SharesModule reports whether direct plugins a and b run one shared runtime and compiled
// module.
func SharesModule(a, b *Plugin) bool {
	return a.direct != nil && b.direct != nil && a.direct.d == b.direct.d
}

// DropCodeBodies is dropCodeBodies.
var DropCodeBodies = dropCodeBodies

// CodeBodyBytes releases what function bodies p's compiled module still keeps and returns their
// size: 0 once Load has released them.
func CodeBodyBytes(p *Plugin) (int, error) { return dropCodeBodies(p.direct.d.compiled) }
