package resource_test

import (
	"testing"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/tokenstoretest"
)

func TestMemoryTokenStoreConformance(t *testing.T) {
	t.Parallel()
	tokenstoretest.Run(t, func(*testing.T) resource.TokenStore {
		return resource.NewMemoryTokenStore()
	})
}
