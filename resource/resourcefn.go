package resource

import (
	"context"

	"github.com/agtsdk/agt/internal/resourcefn"
)

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
	resourcefn.CredentialValues = func(args []string, env, headers map[string]string, url string) []string {
		return credentialValues(MCPServer{Args: args, Env: env, Headers: headers, URL: url})
	}
	resourcefn.BindSecrets = func(env any, ctx context.Context, ref string) func(kind, name string) (string, error) {
		le, _ := env.(*LaunchEnv) // nil resolves none
		return le.bind(ctx, Ref(ref))
	}
	resourcefn.SetLaunchEnvOption = func(env any, option string) { env.(*LaunchEnv).setBy = option }
}
