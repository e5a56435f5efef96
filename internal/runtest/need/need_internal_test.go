package need

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB whose Fatalf and Skipf record the message and
// return, so a test can see which one Missing chose.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Fatalf(format string, args ...any) { r.fatal = fmtf(format, args...) }
func (r *recorder) Skipf(format string, args ...any)  { r.skip = fmtf(format, args...) }

func fmtf(format string, args ...any) string {
	var b strings.Builder
	fmt.Fprintf(&b, format, args...)
	return b.String()
}

// Missing fails under CI and skips elsewhere, saying what is missing and
// how to get it either way. Not parallel: it sets CI.
func TestMissing(t *testing.T) {
	const what, how = "the test's need", "do the thing"
	noted.Store(what, true) // no line on the terminal of whoever runs this test
	for _, tt := range []struct {
		ci                  string
		wantFatal, wantSkip string
	}{
		{"true", "the test's need is missing, but CI=true: do the thing", ""},
		{"", "", "needs the test's need: do the thing"},
		{"false", "", "needs the test's need: do the thing"},
	} {
		t.Setenv("CI", tt.ci)
		r := &recorder{TB: t}
		Missing(r, what, how)
		if r.fatal != tt.wantFatal || r.skip != tt.wantSkip {
			t.Errorf("CI=%q: fatal %q, skip %q; want fatal %q, skip %q", tt.ci, r.fatal, r.skip, tt.wantFatal, tt.wantSkip)
		}
	}
}

func TestPostgres(t *testing.T) {
	t.Setenv(EnvPostgres, "host=/s user=postgres")
	if got := Postgres(t); got != "host=/s user=postgres" {
		t.Fatalf("Postgres = %q", got)
	}
	t.Setenv(EnvPostgres, "")
	t.Setenv("CI", "")
	noted.Store("PostgreSQL", true)
	r := &recorder{TB: t}
	Postgres(r)
	if !strings.HasPrefix(r.skip, "needs PostgreSQL: set AGT_TEST_POSTGRES to a connection string") {
		t.Fatalf("skip message %q", r.skip)
	}
}

// The terminal line names the package directory from the repository's
// root, what is missing and how to get it, on one line.
func TestNote(t *testing.T) {
	t.Parallel()
	if got, want := packageDir(), "internal/runtest/need"; got != want {
		t.Errorf("packageDir() = %q, want %q", got, want)
	}
	var b strings.Builder
	writeNote(&b, "resource/pgrepo", "PostgreSQL", "set AGT_TEST_POSTGRES")
	if got, want := b.String(), "go test: resource/pgrepo skips the tests that need PostgreSQL: set AGT_TEST_POSTGRES\n"; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
}
