package agt_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
)

// The Connector keeps its OAuth credentials in the Host's token store (a
// Logout through it removes what the store holds), unless
// Connector.OAuth.Tokens names its own.
func TestConnectorUsesTheHostTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := agt.Open(ctx, t.TempDir(), &agt.Options{Connector: &mcpconn.ConnectorOptions{OAuth: &mcpconn.OAuthOptions{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	setToken(t, h.Tokens(), "remote", "v")
	if err := h.Connector().Logout(ctx, "remote"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Tokens().Load(ctx, "remote"); !errors.Is(err, resource.ErrNotFound) {
		t.Errorf("after Logout, the Host's store Load = %v, want ErrNotFound", err)
	}

	own := resource.NewMemoryTokenStore()
	h2, err := agt.Open(ctx, t.TempDir(), &agt.Options{Connector: &mcpconn.ConnectorOptions{OAuth: &mcpconn.OAuthOptions{Tokens: own}}})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	setToken(t, h2.Tokens(), "remote", "host")
	setToken(t, own, "remote", "own")
	if err := h2.Connector().Logout(ctx, "remote"); err != nil {
		t.Fatal(err)
	}
	wantToken(t, h2.Tokens(), "remote", "host")
	if _, err := own.Load(ctx, "remote"); !errors.Is(err, resource.ErrNotFound) {
		t.Errorf("Connector.OAuth.Tokens not used: Load = %v, want ErrNotFound", err)
	}
}
