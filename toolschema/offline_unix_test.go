//go:build unix

package toolschema

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// SPEC R6.5: a file named through file:// is never opened. The file is a
// FIFO: while anything holds it open for reading, opening its write end
// without blocking succeeds; otherwise it fails with ENXIO. A compiler that
// tried to read it would block in open, which the watcher sees (and then
// unblocks by writing a schema).
func TestR6_5_FileNeverOpened(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "schema.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := CompileSchema([]byte(`{"$ref":"file://`+filepath.ToSlash(fifo)+`"}`), nil)
		done <- err
	}()
	var err error
	opened := false
	for waiting := true; waiting; {
		select {
		case err = <-done:
			waiting = false
		case <-time.After(5 * time.Millisecond):
			w, oerr := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if oerr == nil {
				opened = true
				_, _ = w.Write([]byte(`{}`))
				_ = w.Close()
			}
		}
	}
	if opened {
		t.Fatal("the compiler opened a file named by a file:// reference")
	}
	if !errors.Is(err, ErrExternalRef) {
		t.Fatalf("CompileSchema = %v, want ErrExternalRef", err)
	}
}
