package mtp2

import (
	"errors"
	"fmt"
)

// Sizes (Q.703 §2.3): the three header octets, then for an LSSU one status
// octet, then the two FCS octets (placeholders here).
const (
	HeaderLen = 3
	FCSLen    = 2
	FISULen   = HeaderLen + FCSLen
	LSSULen   = HeaderLen + 1 + FCSLen
	// MaxSIF is Q.703 §2.3.8's limit on SIO plus SIF: 272 octets of SIF.
	MaxSIF = 273
	// LIMax is what LI says for an MSU of 63 octets or more (Q.703 §2.3.3).
	LIMax = 63
	// SeqMask is the 7-bit FSN/BSN modulus minus one.
	SeqMask = 0x7F
	// SeqInitial is FSN and BSN after a reset (Q.703 §5.2.1: 127), with
	// FIB and BIB 1.
	SeqInitial = 127
)

// Status is an LSSU's status indication (Q.703 §11.1.2).
type Status uint8

// Status indications.
const (
	SIO  Status = 0 // out of alignment
	SIN  Status = 1 // normal alignment
	SIE  Status = 2 // emergency alignment
	SIOS Status = 3 // out of service
	SIPO Status = 4 // processor outage
	SIB  Status = 5 // busy
)

var statusNames = [...]string{"SIO", "SIN", "SIE", "SIOS", "SIPO", "SIB"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// Kind is a signal unit's kind, from LI (Q.703 §2.3.3).
type Kind uint8

// Kinds.
const (
	FISU Kind = iota // LI 0
	LSSU             // LI 1 or 2
	MSU              // LI > 2
)

// SU is one signal unit.
type SU struct {
	BSN, FSN uint8 // 7 bits each
	BIB, FIB bool
	Kind     Kind
	Status   Status // LSSU
	Data     []byte // MSU: SIO and SIF
}

// Errors.
var (
	ErrMalformed = errors.New("mtp2: malformed signal unit")
)

// Decode parses one datagram: the signal unit and its two FCS octets.
// Data aliases b.
func Decode(b []byte) (SU, error) {
	var s SU
	if len(b) < FISULen {
		return s, fmt.Errorf("%w: %d octets", ErrMalformed, len(b))
	}
	b = b[:len(b)-FCSLen]
	s.BSN, s.BIB = b[0]&0x7F, b[0]&0x80 != 0
	s.FSN, s.FIB = b[1]&0x7F, b[1]&0x80 != 0
	li := int(b[2] & 0x3F)
	body := b[HeaderLen:]
	switch {
	case li == 0:
		if len(body) != 0 {
			return s, fmt.Errorf("%w: FISU with %d octets of content", ErrMalformed, len(body))
		}
		s.Kind = FISU
	case li <= 2:
		// Q.703 §11.1.2: the status field is one or two octets; only the
		// first is defined.
		if len(body) != li {
			return s, fmt.Errorf("%w: LSSU with LI %d and %d octets", ErrMalformed, li, len(body))
		}
		s.Kind, s.Status = LSSU, Status(body[0]&0x07)
		if s.Status > SIB {
			return s, fmt.Errorf("%w: LSSU status %d", ErrMalformed, s.Status)
		}
	default:
		// LI is the length up to 62 and 63 for anything longer.
		if li < LIMax && len(body) != li || li == LIMax && len(body) < LIMax || len(body) > MaxSIF {
			return s, fmt.Errorf("%w: MSU with LI %d and %d octets", ErrMalformed, li, len(body))
		}
		s.Kind, s.Data = MSU, body
	}
	return s, nil
}

// Append encodes s after dst, with two zero octets for the FCS.
func (s *SU) Append(dst []byte) []byte {
	h0 := s.BSN & 0x7F
	if s.BIB {
		h0 |= 0x80
	}
	h1 := s.FSN & 0x7F
	if s.FIB {
		h1 |= 0x80
	}
	switch s.Kind {
	case FISU:
		dst = append(dst, h0, h1, 0)
	case LSSU:
		dst = append(dst, h0, h1, 1, uint8(s.Status))
	default:
		li := min(len(s.Data), LIMax)
		dst = append(dst, h0, h1, uint8(li))
		dst = append(dst, s.Data...)
	}
	return append(dst, 0, 0)
}
