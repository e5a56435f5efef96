package main

import (
	"context"
	"errors"
	"time"
)

var errNotWired = errors.New("not wired yet")

func agentTools(ctx context.Context, e *env, ref string, t time.Duration, j bool) error {
	return errNotWired
}
func agentCall(ctx context.Context, e *env, args []string, y bool, t time.Duration) error {
	return errNotWired
}
