package transport

import (
	"context"
	"errors"
	"net/netip"
)

// PPIDM3UA is the SCTP payload protocol identifier of M3UA (RFC 4666 §1.4.7).
const PPIDM3UA uint32 = 3

// Conn is one SCTP association.
//
// ReadMsg must be called from one goroutine at a time; WriteMsg is safe from
// many. Messages on one stream arrive in the order they were written.
type Conn interface {
	// ReadMsg copies the next user message into b and returns its length,
	// stream and PPID. A message longer than b is truncated and
	// ErrShortBuffer returned with it.
	ReadMsg(b []byte) (n int, stream uint16, ppid uint32, err error)
	// WriteMsg sends b as one user message on stream. It may return before
	// the peer has it, but b may be reused as soon as it returns.
	WriteMsg(b []byte, stream uint16, ppid uint32) error
	// OutboundStreams is the number of outbound streams usable (0..n-1).
	OutboundStreams() uint16
	// LocalAddr and RemoteAddr are IP address and SCTP port.
	LocalAddr() netip.AddrPort
	RemoteAddr() netip.AddrPort
	// Shutdown delivers what was written, then ends the association with
	// SHUTDOWN (graceful). Close aborts it.
	Shutdown(ctx context.Context) error
	Close() error
	// Kind says which transport carries the association.
	Kind() Kind
}

// Server is implemented by Conns that can hand each message to a handler
// on their own per-stream reader goroutines, which saves a goroutine
// hand-off per message. The handler runs concurrently for different
// streams and in order within one; b is valid only during the call. Serve
// blocks until the association ends. Use either Serve or ReadMsg.
type Server interface {
	Serve(h func(b []byte, stream uint16, ppid uint32)) error
}

// Listener accepts associations.
type Listener interface {
	Accept(ctx context.Context) (Conn, error)
	Addr() netip.AddrPort
	// Close stops accepting; accepted associations keep working.
	Close() error
	// Released is closed once the listening address is free again, which
	// for udp is after the last accepted association has ended.
	Released() <-chan struct{}
}

// Errors.
var (
	ErrClosed                = errors.New("transport: association closed")
	ErrShortBuffer           = errors.New("transport: message longer than read buffer")
	ErrUnknownKind           = errors.New("transport: unknown transport kind")
	ErrStreamNumber          = errors.New("transport: stream number beyond the negotiated outbound streams")
	ErrKernelSCTPUnavailable = errors.New(
		"transport: the kernel has no SCTP (socket(IPPROTO_SCTP) failed); use transport \"udp\" (SCTP over UDP, RFC 6951) or \"raw\" (userspace SCTP over IP protocol 132, needs CAP_NET_RAW)")
)
