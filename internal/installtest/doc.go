// Package installtest holds the test of the README's install steps: a new
// module beside a clone of agt, made with `go mod init`, runs the install
// block of the README line by line as a user pastes it (its `go mod edit`
// writes the require and replace lines of the root, adapter and agtotel
// modules; `go mod tidy` completes them) and must build a host that
// imports all three, with the SDKs' own packages beside them and no alias.
//
//	go test ./internal/installtest
//
// The test needs the go command (without it, it skips; with CI=true it
// fails) and the modules the host imports, from the module proxy or the
// module cache: with GOPROXY=off it runs offline on the cache alone (the
// checksum database is then out of reach, so it is not asked).
//
// # Limits
//
// The whole run (tidy and build) has 10 minutes: a cold build cache must
// compile the Anthropic and OpenAI SDKs and OpenTelemetry.
package installtest
