package resource

// Unexported functions the external tests reach.
var (
	MatchToolPattern = matchToolPattern
	RedactServer     = redactServer
	StoreSchemes     = storeSchemes
)
