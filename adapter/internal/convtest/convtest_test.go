package convtest_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agtsdk/agt/adapter/internal/convtest"
)

// The images are PNG base64 of the bound's length and 4 more, in the
// Result's content.
func TestImagesAtBound(t *testing.T) {
	t.Parallel()
	const bound = 5 << 20
	cases := convtest.ImagesAtBound("call_1", bound)
	if len(cases) != 2 || !cases[0].Image || cases[1].Image {
		t.Fatalf("cases %d, want one image at the bound and one past it", len(cases))
	}
	for i, c := range cases {
		b, err := base64.StdEncoding.DecodeString(c.Data)
		if len(c.Data) != bound+4*i || err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("%s: %d characters, %v, starts %q", c.Name, len(c.Data), err, b[:min(len(b), 8)])
		}
		var blocks []struct{ Type, Data, MimeType string }
		if err := json.Unmarshal(c.Result.Content, &blocks); err != nil || len(blocks) != 1 || blocks[0].Data != c.Data || c.Result.CallID != "call_1" {
			t.Errorf("%s: result %s %.80s: %v", c.Name, c.Result.CallID, c.Result.Content, err)
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
