//go:build !race

package bundle_test

// raceEnabled: the race detector slows activation several times and inflates RSS.
const raceEnabled = false
