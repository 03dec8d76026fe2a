package testenv

import (
	"testing"
	"time"
)

// PollInterval is how often Eventually checks its condition.
const PollInterval = 10 * time.Millisecond

// Eventually polls cond every PollInterval until it holds, and fails the test, naming what it
// waited for, when within passes first. Use it for state updated after an answer (audit events,
// metrics, a swapped bundle): never sleep, then assert.
//
// # Notes
//
// cond runs on the calling goroutine (it may call t.Fatal for an error polling cannot cure);
// within is a ceiling for a loaded machine, not a timing the test asserts.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("testenv: timed out after %s waiting for %s", within, what)
		}
		time.Sleep(PollInterval)
	}
}
