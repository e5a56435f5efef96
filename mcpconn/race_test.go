//go:build race

package mcpconn_test

// raceBuild: the race detector's shadow memory multiplies a process's RSS.
const raceBuild = true
