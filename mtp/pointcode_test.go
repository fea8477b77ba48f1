package mtp

import (
	"strings"
	"testing"
)

func TestPointCodeFormatWritesAndReadsBothWays(t *testing.T) {
	itu, ansi, num := PointCodeFormat{Dashed: true}, PointCodeFormat{Dashed: true, ANSI: true}, PointCodeFormat{}
	for _, c := range []struct {
		f    PointCodeFormat
		pc   PointCode
		text string
	}{
		{itu, 2<<11 | 100<<3 | 3, "2-100-3"}, // Q.708 zone-area-id
		{itu, 1, "0-0-1"},
		{itu, 1<<14 - 1, "7-255-7"},
		{ansi, 1<<16 | 2<<8 | 3, "1-2-3"}, // T1.111 network-cluster-member
		{ansi, 1<<24 - 1, "255-255-255"},
		{num, 2129, "2129"},
	} {
		if got := c.f.Format(c.pc); got != c.text {
			t.Errorf("%s: Format(%d) = %q, want %q", c.f, c.pc, got, c.text)
		}
		if got, err := c.f.Parse(c.text); err != nil || got != c.pc {
			t.Errorf("%s: Parse(%q) = %d, %v, want %d", c.f, c.text, got, err, c.pc)
		}
	}
	// A number is always read; a code too wide for 3-8-3 is written as one.
	if got, err := itu.Parse("2129"); err != nil || got != 2129 {
		t.Errorf("3-8-3 reading a number: %d %v", got, err)
	}
	if got := itu.Format(1 << 20); got != "1048576" {
		t.Errorf("a 24-bit code in 3-8-3: %q", got)
	}
	if num.String() != "number" || itu.String() != "3-8-3" || ansi.String() != "8-8-8" {
		t.Errorf("names %s %s %s", num, itu, ansi)
	}
}

func TestPointCodeFormatRefusesWithTheReason(t *testing.T) {
	itu, ansi := PointCodeFormat{}, PointCodeFormat{ANSI: true}
	for _, c := range []struct {
		f    PointCodeFormat
		in   string
		want string
	}{
		{itu, "0", "out of range (want 1-16383)"},
		{itu, "16384", "out of range (want 1-16383)"},
		{ansi, "16777216", "out of range (want 1-16777215)"},
		{itu, "1-2", "is not a point code"},
		{itu, "", "is not a point code"},
		{itu, "8-0-0", `part "8" does not fit 3 bits (3-8-3)`},
		{itu, "0-256-0", `part "256" does not fit 8 bits`},
		{ansi, "1-2-256", `part "256" does not fit 8 bits (8-8-8)`},
		{itu, "a-b-c", `part "a"`},
		{itu, "0-0-0", "point code 0 is not allowed"},
	} {
		_, err := c.f.Parse(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s Parse(%q): %v, want %q", c.f, c.in, err, c.want)
		}
	}
}
