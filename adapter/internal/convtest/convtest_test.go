package convtest_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/agtsdk/agt/adapter/internal/convtest"
)

func TestPNGBase64(t *testing.T) {
	t.Parallel()
	for _, n := range []int{12, 16, 5 << 20} {
		s := convtest.PNGBase64(n)
		b, err := base64.StdEncoding.DecodeString(s)
		if len(s) != n || err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("PNGBase64(%d): %d characters, %v, starts %q", n, len(s), err, b[:min(len(b), 8)])
		}
	}
}

func TestJSONHelpers(t *testing.T) {
	t.Parallel()
	if got := convtest.Quote(t, `say "<hi>"`); got != `"say \"\u003chi\u003e\""` {
		t.Errorf("Quote = %s", got)
	}
	if got := string(convtest.JSON(t, map[string]int{"b": 2, "a": 1})); got != `{"a":1,"b":2}` {
		t.Errorf("JSON = %s", got)
	}
}

// recorder keeps what SameJSON reports instead of failing the test.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// A difference of value is reported, once; key order and spacing are not.
func TestSameJSONReports(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		got, want string
		reports   int
	}{
		{`{"b": [1, 2], "a": "x"}`, `{"a":"x","b":[1,2]}`, 0},
		{`{"a":"x","b":[2,1]}`, `{"a":"x","b":[1,2]}`, 1},
		{`{"a":1}`, `{"a":1.5}`, 1},
	} {
		r := &recorder{TB: t}
		convtest.SameJSON(r, []byte(tc.got), tc.want)
		if len(r.errors) != tc.reports {
			t.Errorf("SameJSON(%s, %s) reported %q, want %d reports", tc.got, tc.want, r.errors, tc.reports)
		}
	}
}
