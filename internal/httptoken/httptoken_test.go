package httptoken

import "testing"

func TestValid(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"Region", true},
		{"!#$%&'*+-.^_`|~09azAZ", true},
		{"", false},
		{"My Region", false},
		{"Region:Primary", false},
		{"Région", false},
		{"Region\t1", false},
		{"A\r\nB", false},
		{"a\"b", false},
		{"a(b)", false},
	} {
		if got := Valid(tt.s); got != tt.want {
			t.Errorf("Valid(%q) = %t, want %t", tt.s, got, tt.want)
		}
	}
}
