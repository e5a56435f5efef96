// Package taskrules holds the rules every resource.TaskStore applies (the
// memory store in package resource, boltrepo and pgrepo), so that each has
// one implementation: the bounds of a task handle's fields and of a run,
// the checks of a run and call ID, the time a store keeps (Unix
// milliseconds, UTC), when a handle has expired, and the error of a full
// run. Package resource re-exports what a host needs (ErrLimit,
// MaxRunTasks) and documents the rules.
package taskrules
