package m3ua

import (
	"fmt"
	"sync/atomic"
)

// Stats are the endpoint's counters, updated atomically and readable at any
// time. Snapshot flattens them for a metrics endpoint.
type Stats struct {
	rx, tx [maxClass][maxType]atomic.Uint64
	// ERR messages by code, sent and received.
	errSent, errRecv [maxErrorCode]atomic.Uint64

	Malformed         atomic.Uint64 // messages that failed to decode
	Unexpected        atomic.Uint64 // valid messages not allowed in the current state
	RefusedPeers      atomic.Uint64 // associations refused: unknown address, ASP Id or RC
	RefusedTakeovers  atomic.Uint64 // ASP Up on a second association while the current one lives
	TackRetransmits   atomic.Uint64 // ASP Up / Active / Inactive / Down resent after T(ack)
	UnsolicitedAcks   atomic.Uint64 // ASP Down / Inactive Ack we did not ask for: the peer took us down
	BeatTimeouts      atomic.Uint64 // heartbeat not answered in time
	Reconnects        atomic.Uint64 // dial attempts after the first: after a loss or a failed dial
	StateChanges      atomic.Uint64 // ASP state transitions
	NoRoute           atomic.Uint64 // transfer requests with no usable route
	WrongPPID         atomic.Uint64 // messages with a PPID other than 3 (processed anyway)
	DataIn, DataOut   atomic.Uint64 // DATA messages
	BytesIn, BytesOut atomic.Uint64 // M3UA bytes
	CaptureErrors     atomic.Uint64 // messages the capture writer refused
	// StandbyTakeovers counts ASP Actives a standby sent because the SG said
	// its AS had no active ASP; ASPendingSent the NTFY AS-Pending an SG sent.
	StandbyTakeovers atomic.Uint64
	ASPendingSent    atomic.Uint64
	// The SG's queue for an AS-PENDING AS during T(r) (RFC 4666 §4.3.4.4):
	// DATA queued, delivered to the ASP that became active, dropped because
	// the queue was full (count or bytes), discarded at T(r) expiry.
	RecoveryQueued, RecoveryDelivered  atomic.Uint64
	RecoveryDropped, RecoveryDiscarded atomic.Uint64
}

// Received returns the count of received messages of class and type.
func (s *Stats) Received(class, typ uint8) uint64 {
	if class >= maxClass || typ >= maxType {
		return 0
	}
	return s.rx[class][typ].Load()
}

// Sent returns the count of sent messages of class and type.
func (s *Stats) Sent(class, typ uint8) uint64 {
	if class >= maxClass || typ >= maxType {
		return 0
	}
	return s.tx[class][typ].Load()
}

// ErrorsSent returns how many ERR messages with code were sent.
func (s *Stats) ErrorsSent(code ErrorCode) uint64 {
	if code >= maxErrorCode {
		return 0
	}
	return s.errSent[code].Load()
}

// ErrorsReceived returns how many ERR messages with code were received.
func (s *Stats) ErrorsReceived(code ErrorCode) uint64 {
	if code >= maxErrorCode {
		return 0
	}
	return s.errRecv[code].Load()
}

func (s *Stats) countRx(class, typ uint8) {
	if class < maxClass && typ < maxType {
		s.rx[class][typ].Add(1)
	}
}

func (s *Stats) countTx(b []byte) {
	if len(b) >= 4 && b[2] < maxClass && b[3] < maxType {
		s.tx[b[2]][b[3]].Add(1)
	}
}

// Snapshot returns every non-zero counter by a stable name, e.g.
// "rx_class1_type1", "err_sent_0x09", "beat_timeouts".
func (s *Stats) Snapshot() map[string]uint64 {
	m := map[string]uint64{}
	for c := range maxClass {
		for t := range maxType {
			if v := s.rx[c][t].Load(); v != 0 {
				m[fmt.Sprintf("rx_class%d_type%d", c, t)] = v
			}
			if v := s.tx[c][t].Load(); v != 0 {
				m[fmt.Sprintf("tx_class%d_type%d", c, t)] = v
			}
		}
	}
	for c := range maxErrorCode {
		if v := s.errSent[c].Load(); v != 0 {
			m[fmt.Sprintf("err_sent_0x%02x", c)] = v
		}
		if v := s.errRecv[c].Load(); v != 0 {
			m[fmt.Sprintf("err_recv_0x%02x", c)] = v
		}
	}
	for name, v := range map[string]*atomic.Uint64{
		"malformed": &s.Malformed, "unexpected": &s.Unexpected, "refused_peers": &s.RefusedPeers, "refused_takeovers": &s.RefusedTakeovers,
		"tack_retransmits": &s.TackRetransmits, "unsolicited_acks": &s.UnsolicitedAcks, "beat_timeouts": &s.BeatTimeouts,
		"reconnects": &s.Reconnects, "state_changes": &s.StateChanges, "no_route": &s.NoRoute,
		"wrong_ppid": &s.WrongPPID, "data_in": &s.DataIn, "data_out": &s.DataOut,
		"bytes_in": &s.BytesIn, "bytes_out": &s.BytesOut, "capture_errors": &s.CaptureErrors,
		"standby_takeovers": &s.StandbyTakeovers, "as_pending_sent": &s.ASPendingSent,
		"recovery_queued": &s.RecoveryQueued, "recovery_delivered": &s.RecoveryDelivered,
		"recovery_dropped": &s.RecoveryDropped, "recovery_discarded": &s.RecoveryDiscarded,
	} {
		if x := v.Load(); x != 0 {
			m[name] = x
		}
	}
	return m
}
