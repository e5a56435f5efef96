package resource_test

import (
	"testing"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/taskstoretest"
)

func TestMemoryTaskStoreConformance(t *testing.T) {
	t.Parallel()
	taskstoretest.Run(t, func(*testing.T) resource.TaskStore {
		return resource.NewMemoryTaskStore()
	})
}
