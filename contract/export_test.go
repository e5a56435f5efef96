package contract

// What the external tests read of the package's own.
var (
	AllClasses       = classOrder
	IsValidationText = isValidationText
)

// Count returns how many cases of class c the report holds, all tools
// together.
func (r *Report) Count(c Class) int {
	n := 0
	for _, t := range r.Tools {
		n += t.Classes[c]
	}
	return n
}
