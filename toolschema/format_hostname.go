package toolschema

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Host names: RFC 1123 labels, and for idn-hostname the IDNA2008 rules of
// RFC 5890-5893. golang.org/x/net/idna supplies Punycode, the CONTEXTJ
// joiner rules (it has the Joining_Type data), the RFC 5893 Bidi rule over
// the whole name and the DNS lengths; its code point table is UTS #46,
// which admits symbols IDNA2008 disallows, so the RFC 5892 derived property
// and the CONTEXTO rules are computed here.

const (
	maxHostnameBytes = 253 // of the A-label (ASCII) form, without a trailing dot
	maxLabelBytes    = 63
	// maxIDNHostnameInput bounds the Unicode form before any work: 253
	// ASCII octets cannot come from more than 253 code points of at most 4
	// bytes, plus separators of 3 bytes.
	maxIDNHostnameInput = 4*maxHostnameBytes + 3*127
)

// registrationProfile validates a whole name, U-labels and A-labels mixed,
// as a registry would: no mapping, hyphen rules, joiners, Bidi, lengths.
var registrationProfile = idna.New(
	idna.ValidateForRegistration(),
	idna.BidiRule(),
	idna.CheckJoiners(true),
	idna.CheckHyphens(true),
	idna.StrictDomainName(true),
	idna.VerifyDNSLength(true),
)

// idnaSeparators are the full stops RFC 3490, 3.1 treats as dots.
var idnaSeparators = strings.NewReplacer("\u3002", ".", "\uff0e", ".", "\uff61", ".")

// isHostname reports whether s is a host name: RFC 1123 LDH labels, where a
// label beginning "xn--" must be a valid A-label. With idn, labels may also
// be U-labels and the IDNA separators U+3002, U+FF0E and U+FF61 separate
// labels like a dot. A trailing dot (the DNS root) is refused, as the
// JSON-Schema-Test-Suite requires.
func isHostname(s string, idn bool) bool {
	if s == "" || len(s) > maxIDNHostnameInput || (!idn && len(s) > maxHostnameBytes) || !utf8.ValidString(s) {
		return false
	}
	if idn {
		s = idnaSeparators.Replace(s)
	}
	labels := strings.Split(s, ".")
	international := false
	for i, label := range labels {
		if label == "" {
			return false
		}
		if !isASCII(label) {
			if !idn || !validULabel(label) {
				return false
			}
			international = true
			continue
		}
		if !isLDHLabel(label) {
			return false
		}
		label = asciiLower(label)
		labels[i] = label
		switch {
		case strings.HasPrefix(label, "xn--"):
			u, err := idna.Punycode.ToUnicode(label)
			if err != nil || isASCII(u) || !validULabel(u) {
				return false
			}
			international = true
		case idn && len(label) >= 4 && label[2:4] == "--":
			// A reserved LDH label that is not an A-label (RFC 5890, 2.3.1).
			return false
		}
	}
	if !international {
		return len(s) <= maxHostnameBytes
	}
	lowered := strings.Join(labels, ".")
	ascii, err := registrationProfile.ToASCII(lowered)
	if err != nil || len(ascii) > maxHostnameBytes {
		return false
	}
	// An A-label must be the canonical encoding of its U-label: Punycode
	// admits other spellings that decode to the same text.
	out := strings.Split(ascii, ".")
	if len(out) != len(labels) {
		return false
	}
	for i, label := range labels {
		if strings.HasPrefix(label, "xn--") && out[i] != label {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// isLDHLabel: letters, digits and hyphens, 1 to 63 of them, not beginning
// or ending with a hyphen (RFC 1123, 2.1; RFC 952).
func isLDHLabel(l string) bool {
	if l == "" || len(l) > maxLabelBytes || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// validULabel checks what is local to one U-label (RFC 5891, 5.3-5.4, and
// RFC 5892): NFC, hyphens, no leading combining mark, every code point
// PVALID or allowed by its contextual rule. CONTEXTJ is left to the
// registration profile, which knows the joining types.
func validULabel(u string) bool {
	if u == "" || !norm.NFC.IsNormalString(u) {
		return false
	}
	if u[0] == '-' || u[len(u)-1] == '-' || (len(u) >= 4 && u[2:4] == "--") {
		return false
	}
	first, _ := utf8.DecodeRuneInString(u)
	if unicode.In(first, unicode.Mn, unicode.Mc, unicode.Me) {
		return false
	}
	fold := cases.Fold()
	prev := rune(-1)
	for i, r := range u {
		switch derivedProperty(r, fold) {
		case idnaPVALID, idnaCONTEXTJ:
		case idnaCONTEXTO:
			next, _ := utf8.DecodeRuneInString(u[i+utf8.RuneLen(r):])
			if !contextOAllows(r, prev, next, u) {
				return false
			}
		default:
			return false
		}
		prev = r
	}
	return true
}

type idnaProperty uint8

const (
	idnaDISALLOWED idnaProperty = iota
	idnaPVALID
	idnaCONTEXTJ
	idnaCONTEXTO
)

// derivedProperty computes the IDNA2008 derived property of r, following
// the algorithm of RFC 5892, section 3 (BackwardCompatible is empty).
func derivedProperty(r rune, fold cases.Caser) idnaProperty {
	switch r { // Exceptions (RFC 5892, 2.6)
	case 0x00DF, 0x03C2, 0x06FD, 0x06FE, 0x0F0B, 0x3007:
		return idnaPVALID
	case 0x00B7, 0x0375, 0x05F3, 0x05F4, 0x30FB:
		return idnaCONTEXTO
	case 0x0640, 0x07FA, 0x302E, 0x302F, 0x3031, 0x3032, 0x3033, 0x3034, 0x3035, 0x303B:
		return idnaDISALLOWED
	}
	switch {
	case 0x0660 <= r && r <= 0x0669, 0x06F0 <= r && r <= 0x06F9:
		return idnaCONTEXTO
	case !isAssigned(r):
		return idnaDISALLOWED // UNASSIGNED
	case 'a' <= r && r <= 'z', '0' <= r && r <= '9', r == '-':
		return idnaPVALID
	case unicode.Is(unicode.Join_Control, r):
		return idnaCONTEXTJ
	case isUnstable(r, fold),
		// IgnorableProperties: Default_Ignorable_Code_Point (whose Cf part
		// is not a letter or digit anyway), White_Space, noncharacters.
		unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector, unicode.White_Space, unicode.Noncharacter_Code_Point),
		// IgnorableBlocks.
		0x20D0 <= r && r <= 0x20FF, 0x1D100 <= r && r <= 0x1D24F,
		isOldHangulJamo(r):
		return idnaDISALLOWED
	case unicode.In(r, unicode.Ll, unicode.Lu, unicode.Lo, unicode.Nd, unicode.Lm, unicode.Mn, unicode.Mc):
		return idnaPVALID
	}
	return idnaDISALLOWED
}

func isAssigned(r rune) bool {
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C)
}

// isUnstable: NFKC(casefold(NFKC(r))) differs from r (RFC 5892, 2.3).
func isUnstable(r rune, fold cases.Caser) bool {
	s := string(r)
	return norm.NFKC.String(fold.String(norm.NFKC.String(s))) != s
}

// isOldHangulJamo: Hangul_Syllable_Type L, V or T (RFC 5892, 2.9).
func isOldHangulJamo(r rune) bool {
	return 0x1100 <= r && r <= 0x11FF || 0xA960 <= r && r <= 0xA97F || 0xD7B0 <= r && r <= 0xD7FF
}

// contextOAllows applies the CONTEXTO rules of RFC 5892, appendix A.3-A.9,
// to r between prev and next (-1 or utf8.RuneError at the label's ends) in
// label.
func contextOAllows(r, prev, next rune, label string) bool {
	switch {
	case r == 0x00B7: // MIDDLE DOT: only in "l·l" (Catalan)
		return prev == 'l' && next == 'l'
	case r == 0x0375: // GREEK LOWER NUMERAL SIGN (KERAIA): before Greek
		return next >= 0 && next != utf8.RuneError && unicode.Is(unicode.Greek, next)
	case r == 0x05F3, r == 0x05F4: // HEBREW PUNCTUATION GERESH, GERSHAYIM: after Hebrew
		return prev >= 0 && unicode.Is(unicode.Hebrew, prev)
	case r == 0x30FB: // KATAKANA MIDDLE DOT: with Hiragana, Katakana or Han
		for _, c := range label {
			if c != 0x30FB && unicode.In(c, unicode.Hiragana, unicode.Katakana, unicode.Han) {
				return true
			}
		}
		return false
	case 0x0660 <= r && r <= 0x0669: // ARABIC-INDIC DIGITS: not with extended ones
		return !strings.ContainsFunc(label, func(c rune) bool { return 0x06F0 <= c && c <= 0x06F9 })
	case 0x06F0 <= r && r <= 0x06F9: // EXTENDED ARABIC-INDIC DIGITS: not with plain ones
		return !strings.ContainsFunc(label, func(c rune) bool { return 0x0660 <= c && c <= 0x0669 })
	}
	return false
}
