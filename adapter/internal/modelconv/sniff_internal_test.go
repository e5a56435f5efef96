package modelconv

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

// sniffBase64 reads s a piece at a time (issue 27 (3): an adapter does
// not hold a whole image's bytes to check it); it must say what decoding
// s whole says, at the pieces' boundaries too.
func TestSniffBase64(t *testing.T) {
	t.Parallel()
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n" + strings.Repeat("x", 5000)))
	piece := strings.Repeat("AAAA", 1024) // one piece of sniffBase64
	for _, s := range []string{
		"", "AAAA", "AB==", "ABC=", "A===", "====", "AB=C", "ABC", "AB", "!!!!", "AA AA",
		png, png[:4096], png[:4100], png + "====", png[:4096] + "AB==", png[:4092] + "AB==" + "AAAA",
		piece, piece + "AB==", piece[:4092] + "AB==" + piece, piece + "AB=C", piece + piece + "A!AA", piece + "AAA",
	} {
		checkSniffBase64(t, s)
	}
}

func FuzzSniffBase64(f *testing.F) {
	f.Add("iVBORw0KGgo=")
	f.Add(strings.Repeat("AAAA", 1023) + "AB==AAAA")
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsAny(s, "\r\n") {
			return // ImageType refuses those first
		}
		checkSniffBase64(t, s)
	})
}

func checkSniffBase64(t *testing.T, s string) {
	t.Helper()
	data, err := base64.StdEncoding.DecodeString(s)
	wantType := ""
	if err == nil {
		wantType = http.DetectContentType(data)
	}
	if mt, ok := sniffBase64(s); ok != (err == nil) || mt != wantType {
		t.Errorf("sniffBase64(%.40q... %d chars) = %q, %v; decoding it whole: %q, %v", s, len(s), mt, ok, wantType, err)
	}
}
