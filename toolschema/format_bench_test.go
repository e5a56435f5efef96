package toolschema

import (
	"testing"
)

// A draft-07 schema asserting every format we check ourselves, and a value
// valid for all of them.
var (
	formatBenchSchema = []byte(`{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "properties": {
    "host":  {"format": "hostname"},
    "idn":   {"format": "idn-hostname"},
    "mail":  {"format": "email"},
    "imail": {"format": "idn-email"},
    "ip":    {"format": "ipv4"},
    "uri":   {"format": "uri"},
    "ref":   {"format": "uri-reference"},
    "iri":   {"format": "iri"},
    "iref":  {"format": "iri-reference"},
    "tmpl":  {"format": "uri-template"}
  }
}`)
	formatBenchValid = []byte(`{"host":"api.example.com","idn":"b\u00fccher.example","mail":"joe.bloggs@example.com","imail":"j\u00f6e@b\u00fccher.example",` +
		`"ip":"192.0.2.1","uri":"https://user@example.com:8443/a/b?c=d#e","ref":"../a/b?c","iri":"https://\u00e9x.example/\u00e9","iref":"/\u00e9?q",` +
		`"tmpl":"https://example.com/{+path}/items/{id}{;page}"}`)
)

// BenchmarkValidateFormats validates one value of each format we check.
func BenchmarkValidateFormats(b *testing.B) {
	s, err := Compile(formatBenchSchema, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Validate(formatBenchValid); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawValidatorFormats is the baseline of BenchmarkValidateFormats:
// the library alone, with its own (looser) format checkers.
func BenchmarkRawValidatorFormats(b *testing.B) {
	sch := rawCompile(b, formatBenchSchema)
	b.ReportAllocs()
	for b.Loop() {
		if err := rawValidate(sch, formatBenchValid); err != nil {
			b.Fatal(err)
		}
	}
}
