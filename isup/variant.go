package isup

import "fmt"

// Variant selects the protocol version spoken on a signaling relation.
type Variant uint8

const (
	// ITU is ITU-T Q.763: 12-bit CIC, IAM with Transmission Medium Requirement.
	ITU Variant = iota
	// ANSI is ANSI T1.113: 14-bit CIC, IAM with User Service Information, RLC without
	// optional part, ACL levels up to 3.
	ANSI
)

func (v Variant) String() string {
	switch v {
	case ITU:
		return "itu"
	case ANSI:
		return "ansi"
	}
	return fmt.Sprintf("variant(%d)", uint8(v))
}

// ParseVariant accepts "itu" or "ansi" (any case).
func ParseVariant(s string) (Variant, error) {
	switch s {
	case "itu", "ITU", "Itu":
		return ITU, nil
	case "ansi", "ANSI", "Ansi":
		return ANSI, nil
	}
	return 0, fmt.Errorf("isup: unknown variant %q (want itu or ansi)", s)
}

// cicMask is the CIC width: 12 bits in ITU, 14 bits in ANSI.
func (v Variant) cicMask() uint16 {
	if v == ANSI {
		return 0x3fff
	}
	return 0x0fff
}

// MaxCIC is the largest circuit identification code the variant can carry.
func (v Variant) MaxCIC() uint16 { return v.cicMask() }
