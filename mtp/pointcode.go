package mtp

import (
	"fmt"
	"strconv"
	"strings"
)

// PointCodeFormat is how point codes are written for people: as the
// configuration wrote them, a plain number or the dashed structure of the
// variant. ITU-T Q.708 §2 structures the 14-bit code as zone-area-id (3-8-3
// bits, "2-100-3"); ANSI T1.111.8 the 24-bit one as network-cluster-member
// (8-8-8, "1-2-3"). The gateway builds one from its configuration and hands it
// to every part that prints or reads a point code (logs, status, metrics
// labels, error texts, the host API), so that an operator sees and types the
// codes the way the numbering plan does.
type PointCodeFormat struct {
	// Dashed writes zone-area-id or network-cluster-member; false a number.
	Dashed bool
	// ANSI selects 8-8-8 and 24 bits; false ITU's 3-8-3 and 14 bits. It
	// also says how Parse reads a dashed code when Dashed is false.
	ANSI bool
}

// String names the format as the docs do: number, 3-8-3 or 8-8-8.
func (f PointCodeFormat) String() string {
	switch {
	case !f.Dashed:
		return "number"
	case f.ANSI:
		return "8-8-8"
	}
	return "3-8-3"
}

func (f PointCodeFormat) widths() [3]uint {
	if f.ANSI {
		return [3]uint{8, 8, 8}
	}
	return [3]uint{3, 8, 3}
}

func (f PointCodeFormat) limit() uint64 {
	if f.ANSI {
		return 1<<24 - 1
	}
	return 1<<14 - 1
}

// Format writes pc. A code too wide for the dashed form (an ANSI code in an
// ITU gateway's mixed groups) is written as a number rather than truncated.
func (f PointCodeFormat) Format(pc PointCode) string {
	if !f.Dashed || uint64(pc) > f.limit() {
		return strconv.FormatUint(uint64(pc), 10)
	}
	w := f.widths()
	v := uint32(pc)
	member := v & (1<<w[2] - 1)
	v >>= w[2]
	middle := v & (1<<w[1] - 1)
	v >>= w[1]
	return fmt.Sprintf("%d-%d-%d", v, middle, member)
}

// Parse reads a point code: a number (decimal, or 0x hex), or the dashed
// form of the variant. Zero and codes beyond the variant's width are
// refused: they name no signalling point.
func (f PointCodeFormat) Parse(s string) (PointCode, error) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseUint(s, 0, 32); err == nil {
		if v == 0 || v > f.limit() {
			return 0, fmt.Errorf("point code %d is out of range (want 1-%d)", v, f.limit())
		}
		return PointCode(v), nil
	}
	parts := strings.Split(s, "-")
	if len(parts) != 3 {
		return 0, fmt.Errorf("%q is not a point code (want a number, or zone-area-id like 2-100-3 for ITU, network-cluster-member like 1-2-3 for ANSI)", s)
	}
	w := f.widths()
	var v uint32
	for i, part := range parts {
		x, err := strconv.ParseUint(part, 10, 8)
		if err != nil || x >= 1<<w[i] {
			return 0, fmt.Errorf("%q: part %q does not fit %d bits (%s)", s, part, w[i], PointCodeFormat{Dashed: true, ANSI: f.ANSI})
		}
		v = v<<w[i] | uint32(x)
	}
	if v == 0 {
		return 0, fmt.Errorf("point code 0 is not allowed")
	}
	return PointCode(v), nil
}
