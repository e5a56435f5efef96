package pgrepo

import (
	"context"

	"github.com/agtsdk/agt/resource"
)

// Importing this package registers the postgres:// and postgresql://
// schemes with resource.RegisterStore, so that agt.Open (and
// resource.OpenStore) open such URLs with Open and default Options. A
// program that never imports it links no PostgreSQL driver.
func init() {
	for _, scheme := range []string{"postgres", "postgresql"} {
		resource.RegisterStore(scheme, openStore)
	}
}

func openStore(ctx context.Context, url string) (resource.Repository, func() error, error) {
	repo, err := Open(ctx, url, nil)
	if err != nil {
		return nil, nil, err
	}
	return repo, func() error { repo.Close(); return nil }, nil
}
