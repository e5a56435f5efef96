package resource

import (
	"context"
	"fmt"

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
		le, ok := env.(*LaunchEnv)
		if env != nil && !ok {
			panic(fmt.Sprintf("resourcefn.BindSecrets: a %T, not a *resource.LaunchEnv", env)) // agt's own bug
		}
		return le.bind(ctx, Ref(ref)) // a nil *LaunchEnv resolves none
	}
	resourcefn.SetLaunchEnvOption = func(env any, option string) {
		if le, ok := env.(*LaunchEnv); ok && le != nil {
			le.setBy = option
		}
	}
}
