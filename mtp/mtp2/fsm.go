package mtp2

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/mtp/internal/q703"
	"github.com/isupgw/isupgw/mtp/mtp3/l2"
)

// Timers (Q.703 §12.3). The defaults are libss7's ITU values, which sit in
// Q.703's ranges for 64 kbit/s links.
type Timers struct {
	T1  time.Duration // aligned/ready (Q.703 T1: 40-50 s)
	T2  time.Duration // not aligned (Q.703 T2: 5-50 s)
	T3  time.Duration // aligned (Q.703 T3: 1-2 s)
	T4N time.Duration // normal proving period (Q.703 Pn: 2^16 octets, ~8.2 s at 64 kbit/s)
	T4E time.Duration // emergency proving period (Q.703 Pe: 2^12 octets, ~0.5 s)
	T6  time.Duration // remote congestion (Q.703 T6: 3-6 s)
	T7  time.Duration // excessive delay of acknowledgement (Q.703 T7: 0.5-2 s)
	// Repeat: the LSSU is sent again this often while aligning (this link
	// sends nothing continuously).
	Repeat time.Duration
	// AckDelay: how long a received MSU waits for an outgoing one to carry
	// its BSN before a FISU does.
	AckDelay time.Duration
}

// DefaultTimers returns the defaults.
func DefaultTimers() Timers {
	return Timers{T1: 45 * time.Second, T2: 50 * time.Second, T3: 1500 * time.Millisecond,
		T4N: 8500 * time.Millisecond, T4E: 500 * time.Millisecond, T6: 5 * time.Second,
		T7: 1250 * time.Millisecond, Repeat: time.Second, AckDelay: 5 * time.Millisecond}
}

// Errors from Send.
var (
	ErrNotInService = errors.New("mtp2: link not in service")
	ErrTooBig       = fmt.Errorf("mtp2: MSU longer than %d octets", MaxSIF)
	ErrQueueFull    = errors.New("mtp2: transmission queue full")
)

// MaxQueued bounds the MSUs waiting for the 127-MSU window to open.
const MaxQueued = 4096

// Stats are the link's counters.
type Stats struct {
	SentMSU, ReceivedMSU atomic.Uint64
	Retransmitted        atomic.Uint64
	NACKsSent            atomic.Uint64
	Malformed            atomic.Uint64
	Discarded            atomic.Uint64 // duplicates, MSUs while waiting for a retransmission, out-of-state SUs
	BadBSN               atomic.Uint64
	Failures             atomic.Uint64
	Alignments           atomic.Uint64
	Retrieved, Lost      atomic.Uint64
}

// window is how many MSUs may be unacknowledged (7-bit FSN, Q.703 §5.2.1).
const window = 127

// profile is the shared Q.703 machine with basic error correction (Q.703
// §5) over a socket that sends nothing continuously; see q703.Profile for
// each difference from M2PA.
var profile = q703.Profile{
	SeqMask:              SeqMask,
	Window:               window,
	MaxQueued:            MaxQueued,
	ErrFull:              ErrQueueFull,
	ErrNotInService:      ErrNotInService,
	BasicErrorCorrection: true,
	ReadyIsFISU:          true,
	ProvingIsAlignment:   true,
	Intermittent:         true,
	AckEndsBusy:          true,
	T2Wait:               "SIO, SIN or SIE",
	T3Wait:               "SIN or SIE",
	Received:             func(s q703.Status) string { return toStatus[s].String() },
}

// machine is the shared link state machine with MTP2 framing.
type machine struct {
	*q703.Machine
	stats *Stats
}

// framing encodes what the machine sends as signal units.
type framing struct{ out func([]byte) }

// newMachine builds the machine; out gets every encoded signal unit. out
// runs under the machine's lock and must not block.
func newMachine(clock l2.Clock, tm Timers, stats *Stats, out func([]byte)) *machine {
	t := q703.Timers{T1: tm.T1, T2: tm.T2, T3: tm.T3, T4N: tm.T4N, T4E: tm.T4E, T6: tm.T6, T7: tm.T7,
		Repeat: tm.Repeat, AckDelay: tm.AckDelay} // AckEvery 0: a FISU acknowledges after AckDelay only
	t.Fill(DefaultTimers().q703())
	return &machine{stats: stats, Machine: q703.New(clock, t, profile, framing{out}, q703.Counters{
		SentMSU: &stats.SentMSU, ReceivedMSU: &stats.ReceivedMSU, Retransmitted: &stats.Retransmitted,
		NACKsSent: &stats.NACKsSent, Discarded: &stats.Discarded, BadBSN: &stats.BadBSN,
		Failures: &stats.Failures, Alignments: &stats.Alignments, Retrieved: &stats.Retrieved, Lost: &stats.Lost})}
}

func (t Timers) q703() q703.Timers {
	return q703.Timers{T1: t.T1, T2: t.T2, T3: t.T3, T4N: t.T4N, T4E: t.T4E, T6: t.T6, T7: t.T7,
		Repeat: t.Repeat, AckDelay: t.AckDelay}
}

// LSSU statuses and the machine's statuses, both ways. Q.703 has no LSSU
// for Ready, Processor Recovered or Busy Ended (see q703.Profile).
var (
	toStatus = map[q703.Status]Status{q703.Alignment: SIO, q703.ProvingNormal: SIN, q703.ProvingEmergency: SIE,
		q703.OutOfService: SIOS, q703.ProcessorOutage: SIPO, q703.Busy: SIB}
	fromStatus = map[Status]q703.Status{SIO: q703.Alignment, SIN: q703.ProvingNormal, SIE: q703.ProvingEmergency,
		SIOS: q703.OutOfService, SIPO: q703.ProcessorOutage, SIB: q703.Busy}
)

func header(h q703.Header) SU {
	return SU{BSN: uint8(h.BSN), BIB: h.BIB, FSN: uint8(h.FSN), FIB: h.FIB}
}

// Status sends an LSSU (Q.703 §11.1.2).
func (f framing) Status(h q703.Header, s q703.Status) {
	su := header(h)
	su.Kind, su.Status = LSSU, toStatus[s]
	f.out(su.Append(make([]byte, 0, LSSULen)))
}

// Data sends an MSU; MTP2 has no priority.
func (f framing) Data(h q703.Header, _ uint8, msu []byte) {
	su := header(h)
	su.Kind, su.Data = MSU, msu
	f.out(su.Append(make([]byte, 0, HeaderLen+len(msu)+FCSLen)))
}

// Ack sends a FISU.
func (f framing) Ack(h q703.Header) {
	su := header(h)
	su.Kind = FISU
	f.out(su.Append(make([]byte, 0, FISULen)))
}

// receive decodes one signal unit from the peer and feeds it in.
func (m *machine) receive(b []byte) {
	su, err := Decode(b)
	if err != nil {
		m.stats.Malformed.Add(1)
		return
	}
	h := q703.Header{FSN: uint32(su.FSN), BSN: uint32(su.BSN), FIB: su.FIB, BIB: su.BIB}
	switch su.Kind {
	case LSSU:
		m.Status(fromStatus[su.Status])
	case MSU:
		m.Data(h, su.Data)
	default:
		m.Data(h, nil)
	}
}

// send checks the MSU's length and queues it: it goes out at once while
// fewer than 127 are unacknowledged (Q.703 §5.2.1), else when
// acknowledgements open the window.
func (m *machine) send(msu []byte) error {
	if len(msu) > MaxSIF {
		return ErrTooBig
	}
	if len(msu) < 3 {
		return fmt.Errorf("%w: MSU of %d octets", ErrMalformed, len(msu))
	}
	return m.Send(0, msu)
}
