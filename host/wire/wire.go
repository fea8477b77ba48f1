// Package wire is the host API's protocol: message type names, status codes,
// alarm numbers and the shape of the messages a host receives. The server
// (package host) and the Go client (package host/client) share it; it depends on
// nothing of the gateway's, so a host program that imports the client does not
// pull in the stack.
//
// The protocol is newline-delimited JSON over TCP or a Unix socket: one object
// per line, at most MaxLine octets. docs/host-api.md is the reference.
package wire

import "fmt"

// Version is the protocol version this package speaks (hello's "version").
const Version = 1

// MaxLine is the longest line either side accepts, without its newline.
const MaxLine = 64 * 1024

// DefaultTCP is the server's default TCP address: loopback only.
const DefaultTCP = "127.0.0.1:7700"

// Message types, host to gateway.
const (
	TypeHello    = "hello"
	TypeOutseize = "outseize"
	TypeAlert    = "alert"
	TypeProgress = "progress" // also gateway to host
	TypeAnswer   = "answer"
	TypeRelease  = "release"
	TypeOverload = "overload"
	TypeStatus   = "status"
	// Circuit maintenance and the call trace (docs/host-api.md, docs/operations.md).
	TypeBlock    = "block"
	TypeUnblock  = "unblock"
	TypeReset    = "reset"
	TypeQuery    = "query"
	TypeCircuits = "circuits"
	TypeTrace    = "trace" // also gateway to host: one traced message or request
)

// Message types, gateway to host.
const (
	TypeAck          = "ack"
	TypeNak          = "nak"
	TypeIncoming     = "incoming"
	TypeAnswered     = "answered"
	TypeReleased     = "released"
	TypeAlarm        = "alarm"
	TypeAlarmCleared = "alarm_cleared"
)

// RequestTypes lists the requests a host may send, in documentation order.
var RequestTypes = []string{TypeHello, TypeOutseize, TypeAlert, TypeProgress, TypeAnswer, TypeRelease, TypeOverload, TypeStatus,
	TypeBlock, TypeUnblock, TypeReset, TypeQuery, TypeCircuits, TypeTrace}

// Status is the numeric outcome of a request, in the style of the CSP API. The
// values below 0x0110 are the ISUP stack's (isup/stack.Status) and keep their
// numbers; 0x0110-0x011F are refusals of the host API itself.
type Status uint16

// Statuses shared with the stack (same numbers as isup/stack).
const (
	StatusOK                      Status = 0x0010
	StatusOutboundCongestion      Status = 0x000C
	StatusNoCircuit               Status = 0x0101
	StatusDestinationUnavailable  Status = 0x0102
	StatusUnknownDestination      Status = 0x0103
	StatusBadRequest              Status = 0x0104
	StatusUnknownCall             Status = 0x0105
	StatusInvalidState            Status = 0x0106
	StatusCircuitUnavailable      Status = 0x0107
	StatusShuttingDown            Status = 0x0108
	StatusACCThrottled            Status = 0x0109
	StatusConstraintViolation     Status = 0x010A
	StatusDestinationOutOfService Status = 0x010B
	StatusHighTraffic             Status = 0x010C
	StatusNetworkCongestion       Status = 0x010D
	StatusContinuityNotSupported  Status = 0x010E
	StatusNotAcknowledged         Status = 0x010F
	// Call statuses go on at 0x0120: 0x0110-0x011F are the host API's own.
	StatusStandby Status = 0x0120
)

// Statuses of the host API (0x0110-0x011F).
const (
	StatusBadJSON            Status = 0x0110
	StatusUnknownType        Status = 0x0111
	StatusMissingField       Status = 0x0112
	StatusBadValue           Status = 0x0113
	StatusBadDigits          Status = 0x0114
	StatusNotAuthenticated   Status = 0x0115
	StatusBadToken           Status = 0x0116
	StatusLineTooLong        Status = 0x0117
	StatusVersionUnsupported Status = 0x0118
	StatusAlreadyHello       Status = 0x0119
	StatusTooManyHosts       Status = 0x011A
)

// StatusInfo names a status and says in one sentence what it means.
type StatusInfo struct {
	Status   Status
	Name     string
	Sentence string
}

// Statuses is every status code a host can receive, in numeric order; the
// documentation table is checked against it.
var Statuses = []StatusInfo{
	{StatusOutboundCongestion, "outbound_congestion", "The gateway refuses the call before any IAM, try later: its own outbound queue is congested (SPRC level 1 or 2); or the adaptive admission's limit on calls in set-up to this destination, or overall, is reached (only the excess over what the gateway or the far end serves is refused; docs/congestion.md); or this host already has its share of requests waiting in the gateway (`MaxPending`). A cooperative host backs off (`isupgw load --cooperative`)."},
	{StatusOK, "ok", "Positive acknowledgement: the request was carried out."},
	{StatusNoCircuit, "no_circuit", "Every circuit towards the destination is busy, blocked or controlled by the far end."},
	{StatusDestinationUnavailable, "destination_unavailable", "The destination is unreachable (MTP pause) or its ISUP user part is unavailable."},
	{StatusUnknownDestination, "unknown_destination", "No circuit group is configured for the point code or route."},
	{StatusBadRequest, "bad_request", "The stack refused the request's contents (for example a CIC out of range)."},
	{StatusUnknownCall, "unknown_call", "No call with that handle belongs to this host (never existed, already released, or another host's)."},
	{StatusInvalidState, "invalid_state", "The request does not fit the call's state (for example answer on an outgoing call)."},
	{StatusCircuitUnavailable, "circuit_unavailable", "The CIC asked for is busy, blocked, unequipped or not in the group."},
	{StatusShuttingDown, "shutting_down", "The gateway is stopping; the request was not carried out."},
	{StatusACCThrottled, "acc_throttled", "Refused by automatic congestion control: the destination sent ACL recently."},
	{StatusConstraintViolation, "constraint_violation", "The destination is over one of its configured limits (calls, rate)."},
	{StatusDestinationOutOfService, "destination_out_of_service", "The destination was declared out of service after failed attempts."},
	{StatusHighTraffic, "high_traffic", "Code Yellow: the gateway is refusing new calls because of high traffic; try later."},
	{StatusNetworkCongestion, "network_congestion", "The signaling network towards the destination is congested (M3UA SCON); new calls to it are being refused, try later."},
	{StatusContinuityNotSupported, "continuity_not_supported", "The nature of connection indicators ask for a continuity check, which the gateway cannot perform (it sends no COT); no IAM was sent."},
	{StatusNotAcknowledged, "not_acknowledged", "A maintenance message went out but the far end did not acknowledge it within the repeat timer; the local effect stands and the gateway keeps repeating it."},
	{StatusStandby, "standby", "This gateway is the standby of an active/standby pair: it sends no IAM; send the call to the active one (the Go client does)."},
	{StatusBadJSON, "bad_json", "The line is not a JSON object; the detail gives the parser's message."},
	{StatusUnknownType, "unknown_type", "The \"type\" is not a request this protocol version knows."},
	{StatusMissingField, "missing_field", "A required field is absent or null; the detail names it."},
	{StatusBadValue, "bad_value", "A field has the wrong JSON type or is out of range; the detail names it."},
	{StatusBadDigits, "bad_digits", "A number has a character other than 0-9, A-F, * and #, no digits, or too many digits."},
	{StatusNotAuthenticated, "not_authenticated", "The request came before a successful hello."},
	{StatusBadToken, "bad_token", "The hello's token is wrong; the gateway closes the connection after this nak."},
	{StatusLineTooLong, "line_too_long", "The line exceeded 65536 octets; it was discarded up to its newline."},
	{StatusVersionUnsupported, "version_unsupported", "The hello asked for a protocol version the gateway does not speak."},
	{StatusAlreadyHello, "already_hello", "A second hello on a connection that already completed one."},
	{StatusTooManyHosts, "too_many_hosts", "The gateway's host limit is reached; it closes the connection after this nak."},
}

var statusByCode = func() map[Status]StatusInfo {
	m := make(map[Status]StatusInfo, len(Statuses))
	for _, s := range Statuses {
		m[s.Status] = s
	}
	return m
}()

// Name returns the status's name, or "status_0xNNNN" for a number this package
// does not know.
func (s Status) Name() string {
	if i, ok := statusByCode[s]; ok {
		return i.Name
	}
	return fmt.Sprintf("status_0x%04X", uint16(s))
}

func (s Status) String() string { return fmt.Sprintf("0x%04X %s", uint16(s), s.Name()) }

// Alarm severities (CSP Alarm 0x00B9).
const (
	SeverityInformative uint8 = 0x01
	SeverityMinor       uint8 = 0x02
	SeverityMajor       uint8 = 0x03
)

// Alarm numbers.
const (
	AlarmNetworkCongestion      uint16 = 0x0E // SS7 signaling network congestion (MTP SCON): data dpc, level
	AlarmStackCongestion        uint16 = 0x16 // SS7 signaling stack congestion: data direction, level
	AlarmDestinationUnavailable uint16 = 0x17 // MTP pause or user part unavailable: data dpc
	AlarmDestinationOutOfServ   uint16 = 0x18 // destination declared out of service: data dpc
	AlarmConstraintViolation    uint16 = 0x19 // destination over a configured limit: data dpc, constraint
	AlarmACCActive              uint16 = 0x1A // automatic congestion control towards a destination: data dpc, level
	AlarmAssociationDown        uint16 = 0x1B // a configured M3UA association is not up: data association, address, reason
	AlarmDestinationSlow        uint16 = 0x1C // the admission limits new calls to a destination that answers slowly: data dpc, limit
	AlarmSystemBusy             uint16 = 0x20 // Code Yellow
	AlarmCodeRed                uint16 = 0x21 // Code Red: about to restart
	AlarmCircuitReset           uint16 = 0x30 // no RLC for REL (T5): circuit reset: data dpc, cic
	AlarmGroupResetUnanswered   uint16 = 0x31 // GRS unanswered (T23): data dpc, cic, range
	AlarmBlockingUnanswered     uint16 = 0x32 // BLO/UBL/CGB/CGU unanswered: data dpc, cic, range
	AlarmUnequippedCircuit      uint16 = 0x33 // UCIC received: data dpc, cic
	AlarmRemoteBlocked          uint16 = 0x34 // far end blocked circuits: data dpc, cic, range
	AlarmQueryResult            uint16 = 0x35 // a circuit query answered: data dpc, cic, range, states text
	AlarmStandby                uint16 = 0x40 // this gateway is the standby of its pair; cleared at takeover: data role
)

// AlarmInfo describes an alarm number for the documentation.
type AlarmInfo struct {
	Number   uint16
	Name     string
	Severity uint8
	Data     string
}

// Alarms lists every alarm number a host can receive.
var Alarms = []AlarmInfo{
	{AlarmNetworkCongestion, "SS7 signaling network congestion", SeverityMajor, "dpc, level (ITU 1; ANSI 0-3)"},
	{AlarmStackCongestion, "SS7 signaling stack congestion", SeverityMajor, "direction (\"inbound\"/\"outbound\"), level (1-2)"},
	{AlarmDestinationUnavailable, "destination unavailable", SeverityMajor, "dpc"},
	{AlarmDestinationOutOfServ, "destination out of service", SeverityMajor, "dpc"},
	{AlarmConstraintViolation, "destination constraint violation", SeverityMinor, "dpc, constraint"},
	{AlarmACCActive, "automatic congestion control active towards a destination", SeverityMinor, "dpc, level"},
	{AlarmAssociationDown, "association down", SeverityMajor, "association, address, reason"},
	{AlarmSystemBusy, "System Busy (Code Yellow)", SeverityMajor, "none defined"},
	{AlarmCodeRed, "Code Red (about to restart)", SeverityMajor, "none defined"},
	{AlarmCircuitReset, "circuit reset", SeverityMinor, "dpc, cic"},
	{AlarmGroupResetUnanswered, "group reset unanswered", SeverityMajor, "dpc, cic, range"},
	{AlarmBlockingUnanswered, "blocking unanswered", SeverityMinor, "dpc, cic, range"},
	{AlarmUnequippedCircuit, "unequipped circuit", SeverityMinor, "dpc, cic"},
	{AlarmRemoteBlocked, "circuits blocked by the far end", SeverityMinor, "dpc, cic, range"},
	{AlarmQueryResult, "circuit query result", SeverityInformative, "dpc, cic, range, states"},
	{AlarmStandby, "gateway is standby (cleared: it took over and is active)", SeverityInformative, "role (\"standby\"/\"active\")"},
}

// Param is an optional ISUP parameter as a host sends it in an outseize and
// receives it in an incoming: the parameter code and its value in hex.
type Param struct {
	Code uint8  `json:"code"`
	Hex  string `json:"hex"`
}

// Message is the union of the fields of every message the gateway sends. The
// Go client decodes each line into it; Type says which fields are meaningful.
// Fields that describe an ISUP message (called, cpc, bci, event, ...) are also
// collected in the client's events; see docs/host-api.md.
type Message struct {
	Type string  `json:"type"`
	Seq  *uint64 `json:"seq,omitempty"`
	// ack / nak
	Status Status `json:"status,omitempty"`
	Name   string `json:"name,omitempty"`
	Detail string `json:"detail,omitempty"`
	// calls
	Call     uint64 `json:"call,omitempty"`
	DPC      uint32 `json:"dpc,omitempty"`
	OPC      uint32 `json:"opc,omitempty"`
	CIC      uint16 `json:"cic,omitempty"`
	Route    string `json:"route,omitempty"`
	Message  string `json:"message,omitempty"` // the ISUP message behind a progress or answered
	Cause    uint8  `json:"cause,omitempty"`
	Location uint8  `json:"location,omitempty"`
	ACL      uint8  `json:"acl,omitempty"`
	Remote   bool   `json:"remote,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// incoming
	Called     string  `json:"called,omitempty"`
	CalledNAI  uint8   `json:"called_nai,omitempty"`
	Calling    string  `json:"calling,omitempty"`
	CallingNAI uint8   `json:"calling_nai,omitempty"`
	CPC        uint8   `json:"cpc,omitempty"`
	Params     []Param `json:"params,omitempty"`
	// alarm / alarm_cleared
	Number   uint16         `json:"number,omitempty"`
	Severity uint8          `json:"severity,omitempty"`
	Text     string         `json:"text,omitempty"`
	Data     map[string]any `json:"data,omitempty"` // alarms, and the ack of hello and status
}
