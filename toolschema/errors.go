package toolschema

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors, for errors.Is on the error returned by Compile and
// CompileSchema. Every load error is a *SchemaError that wraps exactly one of
// them.
var (
	// ErrUnsupportedDialect: $schema names something other than one of the
	// five standard dialects (draft-04, -06, -07, 2019-09, 2020-12).
	ErrUnsupportedDialect = errors.New("toolschema: unsupported dialect")
	// ErrExternalRef: a reference would leave the schema document (another
	// URL, a file, or a json-schema.org meta-schema). Nothing is fetched.
	ErrExternalRef = errors.New("toolschema: external reference")
	// ErrNotObject: a tool input schema whose root explicitly declares a
	// type other than object, or the schema false.
	ErrNotObject = errors.New("toolschema: tool input schema root is not an object")
	// ErrInvalidSchema: everything else that makes a schema unusable: not
	// JSON, over a size or depth limit, fails its meta-schema, a bad regex, a
	// dangling reference, a reference cycle that consumes no input.
	ErrInvalidSchema = errors.New("toolschema: invalid schema")
)

// SchemaError is the error Compile and CompileSchema return. It says where in
// the schema the problem is and what to fix; errors.Is matches its Err
// against the package sentinels.
type SchemaError struct {
	// Pointer is a JSON pointer into the schema document ("" is the root).
	Pointer string
	// Message says what is wrong and, where possible, how to fix it.
	Message string
	// Err is one of ErrUnsupportedDialect, ErrExternalRef, ErrNotObject or
	// ErrInvalidSchema.
	Err error
}

// Error implements error.
func (e *SchemaError) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	b.WriteString(" at ")
	b.WriteString(strconv.Quote("#" + e.Pointer))
	b.WriteString(": ")
	b.WriteString(e.Message)
	return b.String()
}

// Unwrap returns the sentinel, so errors.Is(err, ErrExternalRef) works.
func (e *SchemaError) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel this error carries.
func (e *SchemaError) Is(target error) bool { return target == e.Err }

func schemaErr(sentinel error, pointer, message string) *SchemaError {
	return &SchemaError{Pointer: pointer, Message: message, Err: sentinel}
}

// Violation is one reason why arguments do not satisfy a schema. It never
// contains an argument value: only field names (in Path) and facts taken
// from the schema.
type Violation struct {
	// Path is a JSON pointer into the arguments ("" is the whole document).
	Path string `json:"path"`
	// SchemaPath is a JSON pointer into the schema, as a URI fragment, such
	// as "#/properties/limit/minimum".
	SchemaPath string `json:"schema_path"`
	// Message says what the schema requires, such as "must be >= 1".
	Message string `json:"message"`
}

// ArgumentError is the error Validate and ValidateValue return when the
// arguments do not satisfy the schema, are not JSON, are too large or too
// deep, or (for a tool schema) are not a JSON object. Violations are sorted
// by Path, then SchemaPath, then Message; there is at least one and at most
// MaxViolations (the first ones in that order).
type ArgumentError struct {
	Violations []Violation
}

// Error implements error. The text lists every violation; like the
// violations themselves it never contains an argument value.
func (e *ArgumentError) Error() string {
	var b strings.Builder
	b.WriteString("toolschema: invalid arguments")
	for i, v := range e.Violations {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		if v.Path == "" {
			b.WriteString("(root)")
		} else {
			b.WriteString(v.Path)
		}
		b.WriteString(": ")
		b.WriteString(v.Message)
	}
	return b.String()
}

func rootViolation(schemaPath, message string) *ArgumentError {
	return &ArgumentError{Violations: []Violation{{Path: "", SchemaPath: schemaPath, Message: message}}}
}
