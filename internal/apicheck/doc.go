// Package apicheck lists the exported API of agt's root module, one line
// per identifier, so a test can compare it with the checked-in api.txt
// and the surface cannot grow (or shrink) by accident.
//
// The list covers every package of the root module except package main,
// internal packages, test files and nested modules (adapter, agtotel
// and the rest have their own go.mod). Each line is
// the package's import path, a kind and a name, and for a func, method or
// field its type:
//
//	github.com/agtsdk/agt/run func New(context.Context, *Options) (*Run, error)
//	github.com/agtsdk/agt/run method (*Run).Close() error
//	github.com/agtsdk/agt/run field Options.Limits *Limits
//
// It reads the source with go/parser alone (no type checking), so the
// types are written as the source spells them; parameter names and
// constant values are left out (they are not part of the API's shape).
//
// To accept a change of the surface on purpose, regenerate api.txt:
//
//	go test ./internal/apicheck -update
package apicheck
