package main

import (
	"context"
	"errors"
	"time"
)

var errNotWired = errors.New("not wired yet")

func mcpTest(ctx context.Context, e *env, ref string, j bool) error { return errNotWired }
func mcpProbe(ctx context.Context, e *env, ref string, t time.Duration, j bool) error {
	return errNotWired
}
func agentTools(ctx context.Context, e *env, ref string, t time.Duration, j bool) error {
	return errNotWired
}
func agentCall(ctx context.Context, e *env, args []string, y bool, t time.Duration) error {
	return errNotWired
}
func agentMCPs(ctx context.Context, e *env, ref string, asJSON bool) error { return errNotWired }
func agentCheck(ctx context.Context, e *env, ref string, probe bool, timeout time.Duration, asJSON bool) error {
	return errNotWired
}
