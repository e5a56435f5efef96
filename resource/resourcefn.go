package resource

import "github.com/agtsdk/agt/internal/resourcefn"

// Functions agt's own packages call and a host does not need reach them
// through internal/resourcefn (see its doc), so that they stay here, one
// implementation next to the rules they are made of, without being API.
func init() {
	resourcefn.ResolveHeaders = resolveHeaders
	resourcefn.ResolveOAuthSecret = resolveOAuthSecret
	resourcefn.MaskURL = maskURL
	resourcefn.MaskArgs = maskArgs
	resourcefn.StoreScheme = storeScheme
	resourcefn.EnvRefName = validEnvRefName
	resourcefn.LiteralEnvDefault = literalEnvDefault
}
