package agtotel

// LiveCalls is how many calls the Telemetry holds as in flight, for the
// tests that check the registry empties on every path.
func LiveCalls(t *Telemetry) int {
	t.liveMu.Lock()
	defer t.liveMu.Unlock()
	return len(t.live)
}
