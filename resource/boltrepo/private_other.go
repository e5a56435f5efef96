//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package boltrepo

import "os"

// checkPrivate does nothing where file modes do not carry Unix
// permissions (Windows): protect the directory with its ACL instead.
func checkPrivate(*os.File, string) error { return nil }
