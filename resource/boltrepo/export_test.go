package boltrepo

import (
	"os"
	"sync/atomic"
)

// CheckFile runs the checks made before bbolt maps the file at path,
// without the recovery that Open puts around bbolt: a panic of the checks
// themselves reaches the test.
func CheckFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var verified atomic.Pointer[verifiedFile]
	return checkFile(f, path, &verified)
}
