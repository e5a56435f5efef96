package main

import (
	"context"
	"errors"
	"flag"
	"time"

	"github.com/agtsdk/agt/resource"
)

var errNotWired = errors.New("not wired yet")

func mcpCreate(ctx context.Context, e *env, fs *flag.FlagSet, sf *serverFlags, ref string) error {
	_, err := documentFromFlags(fs, sf, resource.Ref(ref))
	if err != nil {
		return err
	}
	return errNotWired
}
func mcpUpdate(ctx context.Context, e *env, fs *flag.FlagSet, sf *serverFlags, ref string) error {
	return errNotWired
}
func showResource(ctx context.Context, e *env, k resource.Kind, ref string, j bool) error {
	if _, err := parseRefArg(string(k)+" get", ref); err != nil {
		return err
	}
	return errNotWired
}
func mcpList(ctx context.Context, e *env, c string, j bool) error { return errNotWired }
func deleteResource(ctx context.Context, e *env, k resource.Kind, ref string, rev int64) error {
	return errNotWired
}
func mcpTest(ctx context.Context, e *env, ref string, j bool) error { return errNotWired }
func mcpProbe(ctx context.Context, e *env, ref string, t time.Duration, j bool) error {
	return errNotWired
}
func mcpImport(ctx context.Context, e *env, f, c string, d bool) error { return errNotWired }
func agentCreate(ctx context.Context, e *env, fs *flag.FlagSet, af *agentFlags, ref string) error {
	return errNotWired
}
func agentUpdate(ctx context.Context, e *env, fs *flag.FlagSet, af *agentFlags, ref string) error {
	if _, err := af.updateChange(); err != nil {
		return err
	}
	return errNotWired
}
func agentList(ctx context.Context, e *env, c string, j bool) error   { return errNotWired }
func agentMCPs(ctx context.Context, e *env, ref string, j bool) error { return errNotWired }
func agentCheck(ctx context.Context, e *env, ref string, p bool, t time.Duration, j bool) error {
	return errNotWired
}
func agentTools(ctx context.Context, e *env, ref string, t time.Duration, j bool) error {
	return errNotWired
}
func agentCall(ctx context.Context, e *env, args []string, y bool, t time.Duration) error {
	return errNotWired
}
