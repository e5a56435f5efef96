//go:build !unix

package mcptest

func processGroup() int { return 0 }
