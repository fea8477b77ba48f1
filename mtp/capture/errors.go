package capture

import (
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Sentinel errors. Errors returned by Reader and Writer wrap one of them, so
// callers can test with errors.Is.
var (
	// ErrBadMagic: the input is neither a pcap nor a pcapng file.
	ErrBadMagic = errors.New("not a pcap or pcapng file")
	// ErrLinkType: the link-layer type is not one this package handles.
	ErrLinkType = errors.New("unsupported link type")
	// ErrTruncated: a header or field runs past the end of the captured data.
	ErrTruncated = errors.New("truncated")
	// ErrMalformed: a length or version field is impossible.
	ErrMalformed = errors.New("malformed")
	// ErrAddress: the Writer was given addresses it cannot encode.
	ErrAddress = errors.New("invalid address")
)

// truncated says which element ran out of bytes, e.g. "truncated SCTP chunk".
type truncated string

func (e truncated) Error() string        { return "truncated " + string(e) }
func (e truncated) Is(target error) bool { return target == ErrTruncated }

// malformed describes an impossible field; it matches ErrMalformed.
type malformed string

func (e malformed) Error() string        { return string(e) }
func (e malformed) Is(target error) bool { return target == ErrMalformed }

func malformedf(format string, a ...any) error { return malformed(fmt.Sprintf(format, a...)) }

// FrameError reports a problem with one frame of a capture. It is not fatal:
// calling Reader.Next again continues with the following frame.
type FrameError struct {
	File  string // file name when opened with Open, else ""
	Frame int    // 1-based frame number
	Err   error
}

func (e *FrameError) Error() string {
	s := "capture: "
	if e.File != "" {
		s += e.File + ": "
	}
	return s + "frame " + strconv.Itoa(e.Frame) + ": " + e.Err.Error()
}

func (e *FrameError) Unwrap() error { return e.Err }

// ReadError is a fatal problem reading the file itself: a record cut short
// (the file is truncated) or a corrupt pcapng block. Unlike a FrameError it
// ends the capture; Reader.Next returns it again on every later call. It
// matches ErrTruncated when the file ends inside a record.
type ReadError struct {
	File  string // file name when opened with Open, else ""
	Frame int    // 1-based number of the frame that could not be read
	Err   error
}

func (e *ReadError) Error() string {
	s := "capture: "
	if e.File != "" {
		s += e.File + ": "
	}
	what := e.Err.Error()
	if errors.Is(e.Err, io.ErrUnexpectedEOF) {
		what = "file truncated inside the record (" + what + ")"
	}
	return s + "frame " + strconv.Itoa(e.Frame) + ": " + what
}

func (e *ReadError) Unwrap() error { return e.Err }

// Is makes a record cut short match ErrTruncated.
func (e *ReadError) Is(target error) bool {
	return target == ErrTruncated && errors.Is(e.Err, io.ErrUnexpectedEOF)
}
