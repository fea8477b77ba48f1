package stack

import (
	"fmt"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

// CallID names a call for its whole life; IDs are never reused by one Stack.
type CallID uint64

// Status is the outcome of a host request, numbered in the style of the CSP API
// (host/ documents the list for operators).
type Status uint16

// Statuses.
const (
	StatusOK                      Status = 0x0010 // positive acknowledgement
	StatusOutboundCongestion      Status = 0x000C // own outbound congestion: no IAM was sent
	StatusNoCircuit               Status = 0x0101 // every circuit to the destination is busy, blocked or not ours to seize
	StatusDestinationUnavailable  Status = 0x0102 // MTP pause (DUNA) or ISUP user part unavailable at the destination
	StatusUnknownDestination      Status = 0x0103 // no circuit group for the point code or route
	StatusBadRequest              Status = 0x0104 // the request is malformed (digits, missing fields, bad CIC)
	StatusUnknownCall             Status = 0x0105 // the call does not exist (or is already released)
	StatusInvalidState            Status = 0x0106 // the request does not fit the call's state
	StatusCircuitUnavailable      Status = 0x0107 // the CIC asked for is busy, blocked or unequipped
	StatusShuttingDown            Status = 0x0108 // the stack is stopping
	StatusACCThrottled            Status = 0x0109 // refused by automatic congestion control towards the destination
	StatusConstraintViolation     Status = 0x010A // the destination is over one of its configured limits
	StatusDestinationOutOfService Status = 0x010B // declared out of service after failed attempts
	StatusHighTraffic             Status = 0x010C // Code Yellow: high traffic, try later
	StatusNetworkCongestion       Status = 0x010D // MTP congestion towards the destination (SCON)
	StatusContinuityNotSupported  Status = 0x010E // the IAM would promise a continuity check (COT) the gateway cannot send
	StatusStandby                 Status = 0x0120 // this gateway is the standby of an active/standby pair: send calls to the active one
)

var statusText = map[Status]string{
	StatusOK:                      "ok",
	StatusOutboundCongestion:      "outbound congestion",
	StatusNoCircuit:               "no circuit available",
	StatusDestinationUnavailable:  "destination unavailable",
	StatusUnknownDestination:      "unknown destination",
	StatusBadRequest:              "bad request",
	StatusUnknownCall:             "unknown call",
	StatusInvalidState:            "request not valid in the call's state",
	StatusCircuitUnavailable:      "circuit unavailable",
	StatusShuttingDown:            "shutting down",
	StatusACCThrottled:            "destination under automatic congestion control",
	StatusConstraintViolation:     "destination constraint violation",
	StatusDestinationOutOfService: "destination out of service",
	StatusHighTraffic:             "high traffic, try later",
	StatusNetworkCongestion:       "signaling network congestion towards the destination",
	StatusContinuityNotSupported:  "continuity check not supported",
	StatusStandby:                 "standby: this gateway is not the active one of its pair",
}

func (s Status) String() string {
	if t, ok := statusText[s]; ok {
		return t
	}
	return fmt.Sprintf("status 0x%04X", uint16(s))
}

// Request is something a host asks of the stack. Every request gets exactly one
// Result.
type Request interface{ request() }

// Outseize asks for an outgoing call: the stack picks a circuit (or uses CIC),
// sends the IAM and answers with a Result carrying the new call's ID.
type Outseize struct {
	Tag      uint64        // the host's correlation number, echoed in the Result
	DPC      mtp.PointCode // destination; or Route
	Route    string        // a named circuit group instead of DPC
	CIC      int           // -1 or unset (with HasCIC false): the stack hunts
	HasCIC   bool
	Called   isup.CalledPartyNumber
	Calling  *isup.CallingPartyNumber
	Category isup.CallingPartyCategory
	// NatureOfConnection and ForwardCall override the defaults when non-zero.
	NatureOfConnection isup.NatureOfConnection
	ForwardCall        isup.ForwardCallIndicators
	// Optional parameters added to the IAM as they are.
	Optional isup.Optional
	// Owner is an opaque value returned in every event of the call (the host API
	// uses it to route events to the connection that placed the call).
	Owner any
	// admitted: the edge admission (WithEdgeAdmission) already admitted it,
	// so the loop does not ask AdmitOutgoing again.
	admitted bool
	// queued is told when it leaves the outbound queue (EdgeAdmission);
	// hunting is the peer whose queued count the edge's circuit check
	// raised for it (edgeHunt), lowered then too.
	queued  Queued
	hunting *peerEdge
	// screened: Screen applied the edge admission already, and the mark it
	// left (admitted, queued) must not be counted twice.
	screened bool
}

// asksContinuity reports whether the IAM would ask for a continuity check
// on this circuit or say one was performed on a previous circuit (nature of
// connection indicators 1 or 2), which the loop refuses.
func (o Outseize) asksContinuity() bool {
	cc := o.NatureOfConnection.ContinuityCheck()
	return cc == 1 || cc == 2
}

// leftQueue tells those that counted the outseize as queued at the edge
// that it left the outbound queue (the loop took it, or it never went in).
func (o Outseize) leftQueue() {
	if o.queued != nil {
		o.queued.Dequeued()
	}
	if o.hunting != nil {
		o.hunting.queued.Add(-1)
	}
}

// Alert sends ACM (with the given backward call indicators, or a default) for an
// incoming call.
type Alert struct {
	Tag  uint64
	Call CallID
	BCI  isup.BackwardCallIndicators
}

// Progress sends CPG with an event for an incoming call.
type Progress struct {
	Tag   uint64
	Call  CallID
	Event isup.EventInformation
}

// Answer sends ANM (or CON in ITU when no ACM was sent) for an incoming call.
type Answer struct {
	Tag  uint64
	Call CallID
}

// Release ends a call with a cause; the stack sends REL and the call is over for
// the host at once (the circuit waits for RLC on its own).
type Release struct {
	Tag      uint64
	Call     CallID
	Cause    uint8
	Location uint8
	// ACL, when set, goes into this REL even if congestion control asks for
	// none (the higher of the two is sent).
	ACL isup.AutomaticCongestionLevel
}

// Accept claims an offered incoming call for an owner (the host that will handle
// it). The stack needs no answer to offer calls; Accept only sets Owner.
type Accept struct {
	Tag   uint64
	Call  CallID
	Owner any
}

// Drain stops taking new calls, for a graceful shutdown: outseizes are refused
// with StatusShuttingDown and new incoming IAMs released with cause 41
// (temporary failure) so the far end tries elsewhere. Calls in progress go on.
type Drain struct{ Tag uint64 }

// ReleaseAll releases every call in progress with the cause (REL to the
// network, Released to the hosts).
type ReleaseAll struct {
	Tag   uint64
	Cause uint8
}

// SetTimers replaces the ISUP timer values (zero fields take the defaults);
// running timers keep their deadlines, the next start uses the new value.
type SetTimers struct {
	Tag    uint64
	Timers Timers
}

func (Drain) request()      {}
func (ReleaseAll) request() {}
func (SetTimers) request()  {}
func (Outseize) request()   {}
func (Alert) request()      {}
func (Progress) request()   {}
func (Answer) request()     {}
func (Release) request()    {}
func (Accept) request()     {}

// Event is something the stack tells the host side.
type Event interface{ event() }

// Result answers a request: Status OK (with the call ID for an Outseize) or a
// refusal.
type Result struct {
	Tag    uint64
	Call   CallID
	Status Status
	Detail string
	Owner  any
	// For an accepted Outseize: where the IAM went.
	DPC mtp.PointCode
	CIC uint16
}

// Incoming offers a new incoming call: the IAM's contents.
type Incoming struct {
	Call  CallID
	OPC   mtp.PointCode // the exchange the call comes from
	Route string        // its circuit group's name
	CIC   uint16
	IAM   *isup.InitialAddress
}

// CallProgress reports a backward message of an outgoing call (ACM, CPG, SUS,
// RES) or a forward one of an incoming call (SUS, RES).
type CallProgress struct {
	Call    CallID
	Owner   any
	Message isup.Message
}

// Answered reports ANM or CON on an outgoing call.
type Answered struct {
	Call    CallID
	Owner   any
	Message isup.Message
}

// Released ends a call for the host: exactly one per call.
type Released struct {
	Call     CallID
	Owner    any
	Cause    uint8
	Location uint8
	ACL      isup.AutomaticCongestionLevel // from the far end's REL, 0 if none
	PC       mtp.PointCode                 // the adjacent exchange
	CIC      uint16
	Remote   bool // true when the far end released (REL received or timer/reset)
	Reason   string
}

// Alarm is a circuit, maintenance or destination condition for operators and
// hosts (host/ maps Kind to the numbered alarms).
type Alarm struct {
	Kind    AlarmKind
	PC      mtp.PointCode
	CIC     uint16
	Range   uint8
	Cleared bool
	Text    string
}

// AlarmKind says what an Alarm is about.
type AlarmKind uint8

// Alarm kinds raised by the stack itself.
const (
	AlarmDestinationUnavailable AlarmKind = iota + 1 // MTP pause or user part unavailable
	AlarmCircuitReset                                // T5/T17: RLC never came; RSC sent
	AlarmGroupResetUnanswered                        // T23: GRS unanswered
	AlarmBlockingUnanswered                          // T13/T15/T19/T21
	AlarmUnequippedCircuit                           // UCIC received
	AlarmRemoteBlocked                               // far end blocked circuits
	AlarmQueryResult                                 // a CQR arrived (Text has the states)
	AlarmStandby                                     // raised by the gateway while it is the standby of a pair; cleared at takeover
)

func (Result) event()       {}
func (Incoming) event()     {}
func (CallProgress) event() {}
func (Answered) event()     {}
func (Released) event()     {}
func (Alarm) event()        {}
