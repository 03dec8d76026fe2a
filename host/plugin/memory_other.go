//go:build unix && !linux

package plugin

// mapNoReserve is Linux's MAP_NORESERVE; elsewhere a reservation is an ordinary mapping.
const mapNoReserve = 0
