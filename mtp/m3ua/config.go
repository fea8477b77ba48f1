package m3ua

import (
	"net/netip"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/transport"
	"github.com/rs/zerolog"
)

// Role is what this endpoint is toward its peers.
type Role int

// Roles.
const (
	// RoleASP is an application server process: it connects to SGs or STPs
	// and sends ASP Up and ASP Active.
	RoleASP Role = iota + 1
	// RoleSG is the signalling gateway side: it accepts ASPs and answers.
	RoleSG
	// RoleIPSP talks to a peer IPSP. The side that dials sends ASP Up and
	// ASP Active (single exchange); with DoubleExchange both sides do.
	RoleIPSP
)

func (r Role) String() string {
	switch r {
	case RoleASP:
		return "ASP"
	case RoleSG:
		return "SG"
	case RoleIPSP:
		return "IPSP"
	}
	return "?"
}

// Peer is one configured far end.
type Peer struct {
	Name string
	// Dial is the address we connect to. Zero means the peer connects to
	// us, from the address in From.
	Dial netip.AddrPort
	// From is the address an accepted peer must come from (any port).
	From netip.Addr
	// ASPID is the ASP identifier we send (ASP, IPSP) or require (SG).
	ASPID    uint32
	HasASPID bool
	// RoutingContexts sent in ASP Active and DATA (the first), or accepted.
	RoutingContexts []uint32
	// TrafficMode requested in ASP Active: override or loadshare.
	TrafficMode mtp.Mode
	// Standby makes this ASP one of an active/standby pair of ASPs in one AS
	// in override mode (RFC 4666 §4.3.4.3): after ASP Up it stays
	// ASP-INACTIVE while another ASP serves the AS, and sends ASP Active
	// only when the SG says none does (NTFY AS-Inactive or AS-Pending,
	// §4.3.4.4, §4.3.4.5). NTFY "Alternate ASP Active" makes it standby
	// again; it never sends ASP Active while another ASP is active, so a
	// restarted instance never fights for the AS.
	Standby bool
	// DPCs reachable through this peer; each gets a route and is audited
	// with DAUD once the association is active.
	DPCs []mtp.PointCode
	// Default makes this peer part of the default route.
	Default bool
}

// Config is an endpoint's configuration.
type Config struct {
	Role      Role
	Transport transport.Kind
	// Listen is where peers connect (SG, accepting IPSP). Zero: no listener.
	Listen netip.AddrPort
	Peers  []Peer
	// RouteMode is how a DPC reached through several peers shares traffic.
	RouteMode mtp.Mode
	// NetworkAppearance, if set, is sent in DATA and SSNM.
	NetworkAppearance    uint32
	HasNetworkAppearance bool
	// DoubleExchange makes IPSPs both send ASP Up and ASP Active.
	DoubleExchange bool
}

// Defaults (RFC 4666 and osmocom values where the RFC gives none).
const (
	DefaultTack        = 2 * time.Second
	DefaultBackoffMin  = 100 * time.Millisecond
	DefaultBackoffMax  = 10 * time.Second
	DefaultQueue       = 4096
	DefaultEventsQueue = 256
	// Heartbeat defaults: a dead or hung peer is declared down between
	// DefaultBeatTimeout and DefaultBeatInterval + DefaultBeatTimeout (3 to
	// 4 s) after its last message.
	DefaultBeatInterval = time.Second
	DefaultBeatTimeout  = 3 * time.Second
)

// Option configures an Endpoint.
type Option func(*Endpoint)

// WithClock replaces the wall clock (tests).
func WithClock(c Clock) Option { return func(e *Endpoint) { e.clock = c } }

// WithTack sets the ASPSM/ASPTM retransmission timer T(ack).
func WithTack(d time.Duration) Option { return func(e *Endpoint) { e.tack = d } }

// WithHeartbeat sets the liveness check (RFC 4666 §4.3.4.6): a BEAT every
// interval, and a peer from which nothing at all (BEAT ACK or any other
// message) has arrived for timeout is declared dead and its association
// aborted. timeout 0 is 2 x interval; interval 0 turns the
// heartbeat off (the SCTP path failure then is the only liveness check). On
// by default: DefaultBeatInterval, DefaultBeatTimeout.
func WithHeartbeat(interval, timeout time.Duration) Option {
	return func(e *Endpoint) {
		e.beatInterval = interval
		e.beatTimeout = timeout
		if timeout == 0 {
			e.beatTimeout = 2 * interval
		}
	}
}

// WithBackoff sets the reconnect backoff range (doubling from min to max).
func WithBackoff(min, max time.Duration) Option {
	return func(e *Endpoint) { e.backoffMin, e.backoffMax = min, max }
}

// WithTransportOptions passes options to every Dial and Listen.
func WithTransportOptions(opts ...transport.Option) Option {
	return func(e *Endpoint) { e.topts = append(e.topts, opts...) }
}

// WithQueues sets the buffer sizes of the indication and event channels.
func WithQueues(indications, events int) Option {
	return func(e *Endpoint) { e.indQueue, e.evQueue = indications, events }
}

// WithLogger sets the logger (default: disabled).
func WithLogger(l zerolog.Logger) Option { return func(e *Endpoint) { e.log = l } }

// WithTap is called with every M3UA message sent (out true) and received,
// with the association's addresses and stream; the capture option uses it.
// It runs on the sending or reading goroutine and must be quick.
func WithTap(f Tap) Option { return func(e *Endpoint) { e.tap = f } }

// Tap observes messages; b must not be kept after the call.
type Tap func(out bool, local, remote netip.AddrPort, stream uint16, b []byte)

// WithRerouteDelay sets the routing table's controlled rerouting delay.
func WithRerouteDelay(d time.Duration) Option { return func(e *Endpoint) { e.reroute = d } }
