//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package boltrepo

import (
	"errors"
	"os"
	"syscall"

	berrors "go.etcd.io/bbolt/errors"
)

// lockForCheck takes the lock bbolt is about to take on f (flock, shared
// for a read-only open), in one attempt, so that checkFile reads the file
// as bbolt will map it and not while another process commits. bbolt's own
// flock on the same descriptor then succeeds at once, and its Close
// releases both. A lock held elsewhere is bbolt's ErrTimeout, which the
// open loop retries.
func lockForCheck(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return berrors.ErrTimeout
	}
	return err
}

// unlockFile releases the lock on f explicitly: closing f alone would not
// while bbolt's memory map of the file still references it.
func unlockFile(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
