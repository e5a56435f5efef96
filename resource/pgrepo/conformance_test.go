package pgrepo_test

import (
	"testing"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/resourcetest"
)

// The shared conformance suite, unchanged, each subtest on its own schema.
func TestConformance(t *testing.T) {
	testConnString(t) // fail under CI, skip locally, before the suite starts
	resourcetest.Run(t, func(t *testing.T) resource.Repository {
		return openRepo(t)
	})
}
