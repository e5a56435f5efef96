package run

import "time"

// SetClock replaces the clock the Run spaces re-listings by
// (Options.Limits.MinRelistInterval); call it before the first batch.
func SetClock(r *Run, now func() time.Time) { r.now = now }
