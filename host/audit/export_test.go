package audit

import "time"

// SetMinDuplicates lets a test use a de-duplication window shorter than MinDuplicates; the
// returned func restores it.
func SetMinDuplicates(d time.Duration) (restore func()) {
	old := minDuplicates
	minDuplicates = d
	return func() { minDuplicates = old }
}

// DisableRecheck makes p send retries after the window without looking in the stream first
// (the control for the recheck tests). Call it before the first Record.
func DisableRecheck(p *Publisher) { p.noRecheck.Store(true) }
