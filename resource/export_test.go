package resource

// Unexported functions the external tests reach.
var (
	RedactServer = redactServer
	StoreSchemes = storeSchemes
)
