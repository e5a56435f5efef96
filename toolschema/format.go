package toolschema

import (
	"errors"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Our own checkers for the formats where the library's are looser than the
// standards. They are registered with every compiler, but the
// library consults registered formats only where the dialect asserts format
// (draft-04, -06, -07), so 2019-09 and 2020-12 stay annotation-only.
//
// Each checker ignores non-strings, runs in time linear in its input, and
// returns a fixed error that never contains the value.
var assertedFormats = []*jsonschema.Format{
	{Name: "hostname", Validate: stringFormat(func(s string) bool { return isHostname(s, false) }, "not a valid host name (RFC 1123, RFC 5891 A-labels)")},
	{Name: "idn-hostname", Validate: stringFormat(func(s string) bool { return isHostname(s, true) }, "not a valid internationalized host name (IDNA2008)")},
	{Name: "email", Validate: stringFormat(func(s string) bool { return isEmail(s, false) }, "not a valid e-mail address (RFC 5321)")},
	{Name: "idn-email", Validate: stringFormat(func(s string) bool { return isEmail(s, true) }, "not a valid internationalized e-mail address (RFC 6531)")},
	{Name: "ipv4", Validate: stringFormat(isIPv4, "not a valid dotted-decimal IPv4 address")},
	{Name: "uri", Validate: stringFormat(func(s string) bool { return isURI(s, false, false) }, "not a valid URI (RFC 3986)")},
	{Name: "uri-reference", Validate: stringFormat(func(s string) bool { return isURI(s, false, true) }, "not a valid URI reference (RFC 3986)")},
	{Name: "iri", Validate: stringFormat(func(s string) bool { return isURI(s, true, false) }, "not a valid IRI (RFC 3987)")},
	{Name: "iri-reference", Validate: stringFormat(func(s string) bool { return isURI(s, true, true) }, "not a valid IRI reference (RFC 3987)")},
	{Name: "uri-template", Validate: stringFormat(isURITemplate, "not a valid URI template (RFC 6570)")},
}

// stringFormat adapts a string predicate to the library's Format.Validate:
// non-strings pass, and a failure is one fixed error built once.
func stringFormat(valid func(string) bool, reason string) func(any) error {
	err := errors.New(reason)
	return func(v any) error {
		s, ok := v.(string)
		if !ok || valid(s) {
			return nil
		}
		return err
	}
}

func registerFormats(c *jsonschema.Compiler) {
	for _, f := range assertedFormats {
		c.RegisterFormat(f)
	}
}
