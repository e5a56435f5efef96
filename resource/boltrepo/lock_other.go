//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package boltrepo

import "os"

// lockForCheck does nothing where bbolt does not lock with flock (Windows
// locks a byte range that a second lock on the same handle would refuse):
// checkFile then reads the file before bbolt locks it, and a commit of
// another process at that moment can make a sound file look damaged.
func lockForCheck(*os.File, bool) error { return nil }

// unlockFile does nothing: where bbolt does not use flock, closing the
// descriptor releases its lock.
func unlockFile(*os.File) {}
