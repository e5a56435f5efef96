// Package suggest is the one rule for "did you mean": NearMiss picks the
// candidate a mistyped name was most likely meant to be. The warnings of
// agent documents (package resource) and the agt command's messages use
// it; it is internal because a host has its own words for its own names.
package suggest
