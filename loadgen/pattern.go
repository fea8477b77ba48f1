package loadgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Pattern makes numbers: every X is replaced by a digit of the call's sequence
// number (the X run counts up, wrapping), every ? by a random digit; other
// characters (0-9, A-F, *, #) are kept.
type Pattern struct {
	text string
	xs   int
}

// ParsePattern checks a number pattern.
func ParsePattern(s string) (Pattern, error) {
	if s == "" {
		return Pattern{}, nil
	}
	p := Pattern{text: strings.ToUpper(s)}
	for i, r := range p.text {
		switch {
		case r == 'X':
			p.xs++
		case r == '?', r >= '0' && r <= '9', r >= 'A' && r <= 'F', r == '*', r == '#':
		default:
			return Pattern{}, fmt.Errorf("number pattern %q: %q at %d is not a digit (0-9, A-F, *, #), X (sequence) or ? (random)", s, r, i)
		}
	}
	return p, nil
}

// Empty reports whether the pattern makes no number.
func (p Pattern) Empty() bool { return p.text == "" }

// Make returns the number for call n.
func (p Pattern) Make(n uint64) string { return string(p.Append(nil, n)) }

// Append appends the number for call n to b.
func (p Pattern) Append(b []byte, n uint64) []byte {
	start := len(b)
	b = append(b, p.text...)
	if p.xs == 0 && !strings.Contains(p.text, "?") {
		return b
	}
	seq := n
	for i := len(b) - 1; i >= start; i-- {
		switch b[i] {
		case 'X':
			b[i] = byte('0' + seq%10)
			seq /= 10
		case '?':
			b[i] = byte('0' + rand.IntN(10))
		}
	}
	return b
}
