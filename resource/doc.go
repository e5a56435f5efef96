// Package resource holds the stored registrations of MCP servers and agents:
// references, kinds, revisions, the Repository interface and the documents.
package resource
