// Package l2 is the service a signalling link layer gives MTP3: the
// primitives between level 2 and level 3 of Q.703 §1.4 / Q.704 §1.3 (start,
// stop, in service, out of service, MSU transfer, retrieval of BSNT and of
// unacknowledged messages for changeover, Q.704 §5.4). The M2PA link (mtp/m2pa)
// and the MTP2 socket link (mtp/mtp2) implement Link; the MTP3 node
// (mtp/mtp3) is their User.
package l2

import "time"

// User receives a link's indications. Calls for one link come from one
// goroutine at a time, in order. They must not call Start or Stop of the
// link synchronously (Send, BSNT and Retrieve are fine).
type User interface {
	// InService: the link is aligned and carries MSUs.
	InService()
	// OutOfService: the link failed (or alignment failed). The link keeps
	// its buffers for retrieval until Start is called again.
	OutOfService(reason string)
	// Received is an MSU (SIO and SIF) from the peer, in order. msu is only
	// valid during the call.
	Received(msu []byte)
	// RemoteProcessorOutage reports the peer's processor outage and its end.
	RemoteProcessorOutage(on bool)
	// Congested reports the peer's busy (receive congestion) and its end.
	Congested(on bool)
}

// Link is one signalling link's level 2.
type Link interface {
	Name() string
	// Start powers the link on and begins alignment (again, after a
	// failure): indications go to u. Buffers left from before are dropped.
	Start(u User)
	// Stop takes the link out of service.
	Stop()
	// Emergency selects emergency proving for the next alignments.
	Emergency(on bool)
	// Send transmits one MSU (SIO and SIF). priority is the ANSI message
	// priority 0..3. It fails when the link is not in service.
	Send(priority uint8, msu []byte) error
	// BSNT is the sequence number of the last MSU accepted from the peer
	// (Q.704 §5.4.1); ok is false when the link cannot tell.
	BSNT() (bsnt uint32, ok bool)
	// Retrieve hands back, in order, the MSUs the peer has not
	// acknowledged beyond fsnc (its BSNT, Q.704 §5.4.2), plus those never
	// transmitted; with ok false (no BSNT from the peer) only those never
	// transmitted. It empties the buffers. SeqMask says the number's width.
	Retrieve(fsnc uint32, ok bool) [][]byte
	// Outstanding is how many MSUs wait in the link: sent and not yet
	// acknowledged, or not yet sent. MTP3 derives link congestion from it
	// (Q.704 §3.8, T1.111.4 §3.8).
	Outstanding() int
	// SeqMask is the modulus minus one of the link's sequence numbers
	// (0x7F for basic MTP2, 0xFFFFFF for M2PA): COO/COA carry them in 7 bits
	// (Q.704 §15.4) or in 24 bits (RFC 4165 §4.1.x, extended changeover).
	SeqMask() uint32
}

// Clock supplies time and timers, so link and MTP3 timers can run on a fake
// clock in tests.
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a started timer.
type Timer interface{ Stop() bool }

// RealClock is the system clock.
type RealClock struct{}

// Now is time.Now.
func (RealClock) Now() time.Time { return time.Now() }

// AfterFunc is time.AfterFunc.
func (RealClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
