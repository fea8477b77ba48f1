package isup

import (
	"errors"
	"fmt"
)

// Sentinel errors. Decode and Marshal wrap them in *Error, so test with errors.Is.
var (
	ErrTruncated        = errors.New("message truncated")
	ErrPointer          = errors.New("pointer out of range")
	ErrLength           = errors.New("parameter length overflows message")
	ErrMissingMandatory = errors.New("mandatory parameter missing")
	ErrBadDigit         = errors.New("invalid digit")
	ErrInvalidLength    = errors.New("invalid parameter length")
	ErrInvalidValue     = errors.New("invalid parameter value")
	ErrTooLong          = errors.New("parameter longer than 255 octets")
	ErrShortBuffer      = errors.New("buffer too short")
	ErrRejected         = errors.New("rejected by accept hook")
	ErrCICRange         = errors.New("CIC out of range for variant")
)

// Error says where in a message a codec error happened.
type Error struct {
	Type   MessageType   // message type, 0 if the header itself was bad
	Param  ParameterCode // parameter being handled, 0 if none
	Offset int           // octet offset in the message (from the CIC), -1 if unknown
	Err    error         // one of the sentinel errors, possibly wrapped
}

func (e *Error) Error() string {
	s := "isup"
	if e.Type != 0 {
		s += " " + e.Type.String()
	}
	if e.Param != 0 {
		s += " " + e.Param.String()
	}
	if e.Offset >= 0 {
		s += fmt.Sprintf(" at octet %d", e.Offset)
	}
	return s + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// valueError reports a parameter value that its typed form cannot accept.
func valueError(code ParameterCode, sentinel error, format string, args ...any) error {
	return &Error{Param: code, Offset: -1, Err: fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)}
}

// lengthError reports a parameter value of the wrong size.
func lengthError(code ParameterCode, got int, want string) error {
	return valueError(code, ErrInvalidLength, "%d octets, want %s", got, want)
}
