package m2pa

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/mtp/internal/q703"
	"github.com/isupgw/isupgw/mtp/mtp3/l2"
)

// Timers of the link state machine. RFC 4165 §4.1.4 keeps the Q.703 timers
// T1 to T4, T6 and T7 with the meanings of Q.703 §12.3; the defaults here
// are Q.703's for 64 kbit/s links where the RFC gives none of its own.
type Timers struct {
	T1  time.Duration // aligned/ready: our Ready sent, waiting for the peer's (Q.703 T1, 40-50 s)
	T2  time.Duration // not aligned: Alignment sent, waiting for the peer's (Q.703 T2, 5-50 s)
	T3  time.Duration // aligned: Proving sent, waiting for the peer's (Q.703 T3, 1-2 s)
	T4N time.Duration // normal proving period (Q.703 Pn 8.2 s; RFC 4165 §4.1.4 allows shorter)
	T4E time.Duration // emergency proving period (Q.703 Pe 0.5 s)
	T6  time.Duration // remote congestion (Busy) tolerated (Q.703 T6, 3-6 s)
	T7  time.Duration // excessive delay of acknowledgement (Q.703 T7, 0.5-2 s)
	// Repeat is how often Alignment is sent again while not aligned
	// (RFC 4165 §4.1.2: it MAY be sent again until the peer answers).
	Repeat time.Duration
	// AckDelay is how long a received MSU may wait for an outgoing one to
	// carry its acknowledgement before an empty User Data message does it
	// (RFC 4165 §4.2.2); AckEvery MSUs unacknowledged force one at once.
	AckDelay time.Duration
	AckEvery int
}

// DefaultTimers returns the defaults.
func DefaultTimers() Timers {
	return Timers{T1: 45 * time.Second, T2: 20 * time.Second, T3: 2 * time.Second,
		T4N: 8200 * time.Millisecond, T4E: 500 * time.Millisecond, T6: 5 * time.Second, T7: time.Second,
		Repeat: time.Second, AckDelay: 10 * time.Millisecond, AckEvery: 16}
}

// Errors from Send.
var (
	ErrNotInService = errors.New("m2pa: link not in service")
	ErrBufferFull   = errors.New("m2pa: retransmission buffer full (peer not acknowledging)")
	ErrTooBig       = fmt.Errorf("m2pa: MSU longer than %d octets", MaxMessage-HeaderLen-1)
)

// MaxUnacked bounds the retransmission buffer.
const MaxUnacked = 1 << 14

// Stats are a link's counters.
type Stats struct {
	SentMSU, ReceivedMSU atomic.Uint64
	SentAcks             atomic.Uint64 // empty User Data messages
	Malformed            atomic.Uint64 // undecodable messages, discarded
	Discarded            atomic.Uint64 // decodable but unexpected (User Data before in service, repeated FSN)
	Failures             atomic.Uint64
	Alignments           atomic.Uint64 // times the link came into service
	Retrieved            atomic.Uint64 // MSUs handed back by Retrieve
	Lost                 atomic.Uint64 // MSUs dropped by Start with buffers not retrieved
}

// profile is the shared Q.703 machine as RFC 4165 §4 runs it: 24-bit
// numbers, Ready and Busy Ended sent explicitly, no negative acknowledgement
// (SCTP delivers reliably and in order, so a gap fails the link), the
// buffer bounded by MaxUnacked with nothing queued behind it.
var profile = q703.Profile{
	SeqMask:                    SeqMask,
	Window:                     MaxUnacked,
	ErrFull:                    ErrBufferFull,
	ErrNotInService:            ErrNotInService,
	RetrieveUnackedWithoutBSNT: true,
	T2Wait:                     "Alignment",
	T3Wait:                     "Proving",
}

// machine is the shared link state machine with M2PA framing.
type machine struct {
	*q703.Machine
	stats *Stats
}

// framing encodes what the machine sends as M2PA messages.
type framing struct {
	stats *Stats
	out   func(b []byte, stream uint16)
}

// newMachine builds the machine; out gets every encoded message with the
// stream it goes on. out runs under the machine's lock and must not block.
func newMachine(clock l2.Clock, tm Timers, stats *Stats, out func(b []byte, stream uint16)) *machine {
	t := q703.Timers(tm)
	t.Fill(q703.Timers(DefaultTimers()))
	m := &machine{stats: stats}
	m.Machine = q703.New(clock, t, profile, framing{stats: stats, out: out}, q703.Counters{
		SentMSU: &stats.SentMSU, ReceivedMSU: &stats.ReceivedMSU, Discarded: &stats.Discarded,
		Failures: &stats.Failures, Alignments: &stats.Alignments, Retrieved: &stats.Retrieved, Lost: &stats.Lost})
	return m
}

// Link Status states and the machine's statuses, both ways.
var (
	toState = map[q703.Status]State{
		q703.OutOfService: StateOutOfService, q703.Alignment: StateAlignment,
		q703.ProvingNormal: StateProvingNormal, q703.ProvingEmergency: StateProvingEmergency,
		q703.Ready: StateReady, q703.ProcessorOutage: StateProcessorOutage,
		q703.ProcessorRecovered: StateProcessorRecovered, q703.Busy: StateBusy, q703.BusyEnded: StateBusyEnded,
	}
	fromState = func() map[State]q703.Status {
		r := make(map[State]q703.Status, len(toState))
		for k, v := range toState {
			r[v] = k
		}
		return r
	}()
)

// Streams (RFC 4165): Link Status messages about the link (alignment,
// proving, ready, out of service) on stream 0; User Data, and the Link Status
// messages that must stay in order with it (processor outage and recovery,
// busy and busy ended), on stream 1. The Yate capture does the same.
const (
	streamStatus = 0
	streamData   = 1
)

// Status sends a Link Status message (RFC 4165 §2.3.2).
func (f framing) Status(h q703.Header, s q703.Status) {
	msg := Message{Type: TypeLinkStatus, BSN: h.BSN, FSN: h.FSN, State: toState[s]}
	stream := uint16(streamStatus)
	switch s {
	case q703.ProcessorOutage, q703.ProcessorRecovered, q703.Busy, q703.BusyEnded:
		stream = streamData
	}
	f.out(msg.Append(make([]byte, 0, HeaderLen+4)), stream)
}

// Data sends a User Data message with an MSU (RFC 4165 §2.3.1).
func (f framing) Data(h q703.Header, pri uint8, msu []byte) {
	msg := Message{Type: TypeUserData, BSN: h.BSN, FSN: h.FSN, Priority: pri, Data: msu}
	f.out(msg.Append(make([]byte, 0, HeaderLen+1+len(msu))), streamData)
}

// Ack sends an empty User Data message: an acknowledgement only (RFC 4165
// §4.2.2).
func (f framing) Ack(h q703.Header) {
	msg := Message{Type: TypeUserData, BSN: h.BSN, FSN: h.FSN}
	f.stats.SentAcks.Add(1)
	f.out(msg.Append(make([]byte, 0, HeaderLen)), streamData)
}

// receive decodes one message from the peer and feeds it in.
func (m *machine) receive(b []byte) {
	msg, err := Decode(b)
	if err != nil {
		m.stats.Malformed.Add(1)
		return
	}
	if msg.Type == TypeLinkStatus {
		m.Status(fromState[msg.State])
		return
	}
	m.Data(q703.Header{FSN: msg.FSN, BSN: msg.BSN}, msg.Data)
}

// send checks the MSU's length and transmits it (RFC 4165 §4.2.1).
func (m *machine) send(pri uint8, msu []byte) error {
	if len(msu) > MaxMessage-HeaderLen-1 {
		return ErrTooBig
	}
	if len(msu) == 0 {
		return fmt.Errorf("%w: empty MSU", ErrMalformed)
	}
	return m.Send(pri, msu)
}
