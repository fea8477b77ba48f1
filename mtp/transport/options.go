package transport

import (
	"net/netip"
	"time"

	"github.com/pion/logging"
)

// Defaults.
const (
	DefaultStreams      = 16
	DefaultSocketBuffer = 4 << 20 // 4 MiB, per DESIGN.md; small buffers drop bursts on loopback
	DefaultMaxMessage   = 65536
	// DefaultMaxBuffered bounds what WriteMsg queues per stream before it
	// blocks, so a fast writer cannot grow memory without limit.
	DefaultMaxBuffered = 1 << 20
)

// Option configures Dial and Listen.
type Option func(*options)

type options struct {
	streams       uint16
	socketBuffer  int
	maxMessage    uint32
	maxBuffered   uint64
	local         netip.AddrPort // dial: local bind address
	sctpLocalPort uint16
	sctpPeerPort  uint16
	logger        logging.LoggerFactory
	onResolve     func(Kind, string)
	accept        func(remote netip.AddrPort) bool

	maxAssocs, maxAssocsPerAddr int
	cookieLife                  time.Duration
	now                         func() time.Time // tests age cookies with it
	maxRetrans                  int              // RFC 9260 Association.Max.Retrans (0: the stack's default)
	rtoMax                      time.Duration    // RFC 9260 RTO.Max (0: the stack's default)
}

func buildOptions(opts []Option) *options {
	o := &options{
		streams:      DefaultStreams,
		socketBuffer: DefaultSocketBuffer,
		maxMessage:   DefaultMaxMessage,
		maxBuffered:  DefaultMaxBuffered,
		logger:       quietLogger{},

		maxAssocs:        DefaultMaxAssociations,
		maxAssocsPerAddr: DefaultMaxAssociationsPerAddr,
		cookieLife:       DefaultCookieLife,
		now:              time.Now,
	}
	for _, f := range opts {
		f(o)
	}
	return o
}

// WithStreams sets the number of streams offered in each direction (>= 2).
func WithStreams(n uint16) Option {
	return func(o *options) {
		if n >= 2 {
			o.streams = n
		}
	}
}

// WithSocketBuffer sets the UDP or raw socket send and receive buffers.
func WithSocketBuffer(bytes int) Option { return func(o *options) { o.socketBuffer = bytes } }

// WithMaxBuffered bounds the bytes queued per stream before WriteMsg blocks.
func WithMaxBuffered(bytes uint64) Option { return func(o *options) { o.maxBuffered = bytes } }

// WithLocalAddr binds the dialing side to a local address (port 0: any).
func WithLocalAddr(a netip.AddrPort) Option { return func(o *options) { o.local = a } }

// WithSCTPPorts sets the SCTP ports carried in the common header when they
// differ from the UDP ports (udp transport): local and peer. Zero keeps the
// UDP port.
func WithSCTPPorts(local, peer uint16) Option {
	return func(o *options) { o.sctpLocalPort, o.sctpPeerPort = local, peer }
}

// WithLoggerFactory passes a pion logger factory (default: silent).
func WithLoggerFactory(f logging.LoggerFactory) Option { return func(o *options) { o.logger = f } }

// WithResolveHook is told which transport KindAuto chose and why.
func WithResolveHook(f func(k Kind, why string)) Option { return func(o *options) { o.onResolve = f } }

// WithAcceptFilter lets a listener drop packets from unwanted addresses
// before anything else is done with them, even the checksum (udp: the UDP
// source; raw: the IP address and SCTP port). They are dropped silently
// and counted in ListenerStats.UnknownAddress.
func WithAcceptFilter(f func(remote netip.AddrPort) bool) Option {
	return func(o *options) { o.accept = f }
}

// WithAssociationLimits bounds a listener's associations (udp, raw): in
// all, and from one peer IP address. A verified COOKIE ECHO beyond them is
// refused with ABORT (RFC 9260 §5.1) and counted in ListenerStats.OverLimit.
// Zero keeps a default.
func WithAssociationLimits(total, perAddr int) Option {
	return func(o *options) {
		if total > 0 {
			o.maxAssocs = total
		}
		if perAddr > 0 {
			o.maxAssocsPerAddr = perAddr
		}
	}
}

// withClock ages State Cookies by now (tests).
func withClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithPathFailure bounds how long an unanswered association lives (RFC 9260
// §8.1 and §15): after maxRetrans consecutive retransmissions without an
// acknowledgement (Association.Max.Retrans) the association is declared
// down, and no retransmission timeout grows beyond rtoMax (RTO.Max). Zero
// keeps the stack's default. Kernel SCTP applies both (SCTP_ASSOCINFO,
// SCTP_RTOINFO). pion/sctp v1.12 applies RTO.Max only: it retransmits DATA
// without limit, so over udp and raw an association is declared down by
// M3UA's heartbeat (BEAT) instead.
func WithPathFailure(maxRetrans int, rtoMax time.Duration) Option {
	return func(o *options) { o.maxRetrans, o.rtoMax = maxRetrans, rtoMax }
}

// quietLogger silences pion, which logs every unparsable packet at Warn.
type quietLogger struct{}

func (quietLogger) NewLogger(string) logging.LeveledLogger { return nopLogger{} }

type nopLogger struct{}

func (nopLogger) Trace(string)          {}
func (nopLogger) Tracef(string, ...any) {}
func (nopLogger) Debug(string)          {}
func (nopLogger) Debugf(string, ...any) {}
func (nopLogger) Info(string)           {}
func (nopLogger) Infof(string, ...any)  {}
func (nopLogger) Warn(string)           {}
func (nopLogger) Warnf(string, ...any)  {}
func (nopLogger) Error(string)          {}
func (nopLogger) Errorf(string, ...any) {}

// peerQueue is how many packets a listener holds for one association while
// its SCTP stack catches up. The receive window (4 MiB) bounds packets in
// flight to a few thousand, so this is sized to hold a full window of
// small bundled packets; a smaller queue dropped packets under load and
// left recovery to 1 s retransmission timeouts.
const peerQueue = 16384
