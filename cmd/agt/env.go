package main

// env is what one invocation of agt carries: its streams, the global flags,
// and the host, opened on first use.
type env struct {
	stdio
	global globalFlags
}

func (e *env) close() {}
