package isup

// Digits is an address signal string as carried on the wire: packed BCD, the first
// digit in the low nibble of the first octet. Keeping the packed form makes decoding
// free and re-encoding exact (the filler nibble is preserved).
//
// In text form each digit is one character: 0-9, and A-F for the codes 10-15
// (B = code 11, C = code 12, F = ST, end of pulsing), as Wireshark prints them.
type Digits struct {
	// Odd is true when the last octet's high nibble is filler.
	Odd bool
	// BCD holds the packed digits.
	BCD []byte
}

// ParseDigits packs a digit string. Accepted: 0-9, A-F, a-f, '*' (code 11) and
// '#' (code 12).
func ParseDigits(s string) (Digits, error) {
	d := Digits{Odd: len(s)%2 == 1, BCD: make([]byte, (len(s)+1)/2)}
	for i := 0; i < len(s); i++ {
		n, ok := digitValue(s[i])
		if !ok {
			return Digits{}, &Error{Offset: -1, Err: &digitError{s: s, at: i}}
		}
		if i%2 == 0 {
			d.BCD[i/2] = n
		} else {
			d.BCD[i/2] |= n << 4
		}
	}
	return d, nil
}

// MustDigits is ParseDigits for constants in tests and examples; it panics on error.
func MustDigits(s string) Digits {
	d, err := ParseDigits(s)
	if err != nil {
		panic(err)
	}
	return d
}

type digitError struct {
	s  string
	at int
}

func (e *digitError) Error() string {
	return "invalid digit " + quoteByte(e.s[e.at]) + " at position " + itoa(e.at) + " of " + `"` + e.s + `"`
}
func (e *digitError) Unwrap() error { return ErrBadDigit }

func quoteByte(b byte) string {
	if b >= 0x20 && b < 0x7f {
		return "'" + string(rune(b)) + "'"
	}
	const hex = "0123456789ABCDEF"
	return "0x" + string(hex[b>>4]) + string(hex[b&15])
}

func digitValue(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c == '*':
		return 11, true
	case c == '#':
		return 12, true
	}
	return 0, false
}

// Len is the number of digits.
func (d Digits) Len() int {
	n := 2 * len(d.BCD)
	if d.Odd && n > 0 {
		n--
	}
	return n
}

// Digit returns digit i (0-based) as its 4-bit code.
func (d Digits) Digit(i int) byte {
	b := d.BCD[i/2]
	if i%2 == 1 {
		return b >> 4
	}
	return b & 0x0f
}

// String returns the digits as text (see the type comment).
func (d Digits) String() string {
	var buf [32]byte // most numbers fit: one allocation, the string's own
	return string(d.Append(buf[:0]))
}

// Append appends the digits as text (see the type comment) to b.
func (d Digits) Append(b []byte) []byte {
	const chars = "0123456789ABCDEF"
	for i, n := 0, d.Len(); i < n; i++ {
		b = append(b, chars[d.Digit(i)])
	}
	return b
}

// HasST reports whether the last digit is ST (code 15, end of pulsing).
func (d Digits) HasST() bool {
	n := d.Len()
	return n > 0 && d.Digit(n-1) == 0x0f
}

// Equal compares the digit strings, ignoring the filler nibble.
func (d Digits) Equal(o Digits) bool {
	if d.Len() != o.Len() {
		return false
	}
	for i := 0; i < d.Len(); i++ {
		if d.Digit(i) != o.Digit(i) {
			return false
		}
	}
	return true
}
