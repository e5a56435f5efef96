//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package boltrepo

import (
	"fmt"
	"os"
)

// checkPrivate refuses a file that group or others may read or write: it
// holds credentials. The mode is read from the open descriptor, so a file
// swapped in after a check is the one judged.
func checkPrivate(f *os.File, path string) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("boltrepo: %s is not a regular file: a token store must be one", path)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("boltrepo: %s has mode %04o: group or others may read or write the OAuth credentials in it; restrict it to its owner (chmod 600) and revoke the tokens if others may have read them", path, perm)
	}
	return nil
}
