package m3ua

// ErrorCode is an M3UA ERR code (RFC 4666 §3.8.1).
type ErrorCode uint32

// Error codes.
const (
	ErrInvalidVersion         ErrorCode = 0x01
	ErrUnsupportedClass       ErrorCode = 0x03
	ErrUnsupportedType        ErrorCode = 0x04
	ErrUnsupportedTrafficMode ErrorCode = 0x05
	ErrUnexpectedMessage      ErrorCode = 0x06
	ErrProtocolError          ErrorCode = 0x07
	ErrInvalidStream          ErrorCode = 0x09
	ErrRefusedMgmtBlocking    ErrorCode = 0x0D
	ErrASPIDRequired          ErrorCode = 0x0E
	ErrInvalidASPID           ErrorCode = 0x0F
	ErrInvalidParamValue      ErrorCode = 0x11
	ErrParamField             ErrorCode = 0x12
	ErrUnexpectedParam        ErrorCode = 0x13
	ErrDestStatusUnknown      ErrorCode = 0x14
	ErrInvalidNA              ErrorCode = 0x15
	ErrMissingParam           ErrorCode = 0x16
	ErrInvalidRC              ErrorCode = 0x19
	ErrNoConfiguredAS         ErrorCode = 0x1A
	maxErrorCode                        = 0x20
)

// codeFor maps a receive-path error to the ERR code RFC 4666 names for it.
func codeFor(err error) ErrorCode {
	switch err {
	case errVersion:
		return ErrInvalidVersion
	case errUnexpParam:
		return ErrUnexpectedParam
	case errMissingParam:
		return ErrMissingParam
	case errParamValue:
		return ErrInvalidParamValue
	case errParamField, errShort, errLength:
		return ErrParamField
	}
	return ErrProtocolError
}
