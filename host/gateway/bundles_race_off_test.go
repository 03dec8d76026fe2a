//go:build !race

package gateway_test

// bundlesRace: the race detector slows activation several times (see TestSwapThroughGateway).
const bundlesRace = false
