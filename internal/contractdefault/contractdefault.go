// Package contractdefault holds the defaults of contract.Options that the
// agt CLI shows as its flag defaults: one value for both, and none of the
// contract package's API (each Options field documents its default).
package contractdefault

import "time"

// The defaults of contract.Options.MaxCases, CaseTimeout and Timeout.
const (
	MaxCases    = 120
	CaseTimeout = 10 * time.Second
	Timeout     = 5 * time.Minute
)
