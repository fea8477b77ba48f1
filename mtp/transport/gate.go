package transport

import (
	"encoding/binary"
	"net/netip"
	"sync"
	"sync/atomic"
)

// ListenerStats counts what a userspace listener (udp, raw) did with
// packets from addresses that have no association yet. Every packet it
// drops is counted under exactly one reason.
type ListenerStats struct {
	UnknownAddress atomic.Uint64 // refused by the accept filter (checked first)
	BadChecksum    atomic.Uint64 // wrong CRC32c
	BadInit        atomic.Uint64 // INIT malformed (RFC 9260 §3.3.2, §8.5.1)
	BadCookie      atomic.Uint64 // COOKIE ECHO whose cookie does not verify (§5.1.5 steps 1-3)
	StaleCookie    atomic.Uint64 // COOKIE ECHO whose cookie is past its life (§5.1.5 step 4)
	OverLimit      atomic.Uint64 // verified COOKIE ECHO refused: association limit or accept queue full
	OutOfTheBlue   atomic.Uint64 // other packets for no association (§8.4)
	InitAcks       atomic.Uint64 // INIT ACKs sent (no state kept for them)
	Established    atomic.Uint64 // associations built from a verified cookie
}

// StatsOf returns a listener's counters, or nil for the kernel listener
// (the kernel keeps its own).
func StatsOf(l Listener) *ListenerStats {
	if s, ok := l.(interface{ stats() *ListenerStats }); ok {
		return s.stats()
	}
	return nil
}

// Defaults for WithAssociationLimits.
const (
	DefaultMaxAssociations        = 1024
	DefaultMaxAssociationsPerAddr = 64
)

// limiter bounds a listener's associations, in all and per peer IP.
type limiter struct {
	mu            sync.Mutex
	n             int
	byAddr        map[netip.Addr]int
	maxN, maxAddr int
}

func newLimiter(o *options) *limiter {
	return &limiter{maxN: o.maxAssocs, maxAddr: o.maxAssocsPerAddr, byAddr: map[netip.Addr]int{}}
}

func (l *limiter) take(a netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n >= l.maxN || l.byAddr[a] >= l.maxAddr {
		return false
	}
	l.n++
	l.byAddr[a]++
	return true
}

func (l *limiter) give(a netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n--
	if l.byAddr[a]--; l.byAddr[a] <= 0 {
		delete(l.byAddr, a)
	}
}

// gate is a listener's front door: it decides, without keeping state, what
// to do with a packet from an address that has no association.
type gate struct {
	o     *options
	jar   *cookieJar
	st    ListenerStats
	limit *limiter
}

func newGate(o *options) *gate {
	return &gate{o: o, jar: newCookieJar(o.cookieLife, o.now), limit: newLimiter(o)}
}

// verdict: reply goes back to the sender (INIT ACK, ERROR, ABORT); est,
// when set, is a verified cookie to build an association from, with rest
// the packet's chunks after COOKIE ECHO.
type verdict struct {
	reply []byte
	est   *cookieState
	rest  []byte
}

// judge looks at a packet from an address with no association, cheapest
// test first: the address, the checksum, then the chunk.
func (g *gate) judge(pkt []byte, from netip.AddrPort) verdict {
	if g.o.accept != nil && !g.o.accept(from) {
		g.st.UnknownAddress.Add(1)
		return verdict{}
	}
	if !checksumOK(pkt) {
		g.st.BadChecksum.Add(1)
		return verdict{}
	}
	src, dst := packetPorts(pkt)
	b := binding{from: from, srcPort: src, dstPort: dst}
	switch firstChunkType(pkt) {
	case chunkInit:
		init, err := checkInit(pkt)
		if err != nil {
			g.st.BadInit.Add(1)
			return verdict{}
		}
		tag, tsn := nonZeroRandom(), nonZeroRandom()
		cookie := g.jar.make(init, b, tag, tsn)
		g.st.InitAcks.Add(1)
		return verdict{reply: initAck(init, dst, src, tag, tsn, g.rwnd(), g.o.streams, cookie)}
	case chunkCookieEcho:
		cookie, rest, ok := cookieEcho(pkt)
		if !ok {
			g.st.BadCookie.Add(1)
			return verdict{}
		}
		st, late, err := g.jar.open(cookie, b, binary.BigEndian.Uint32(pkt[4:]))
		switch err {
		case nil:
			return verdict{est: st, rest: rest}
		case errStaleCookie:
			g.st.StaleCookie.Add(1)
			return verdict{reply: staleCookieError(pkt, st.peerTag, late)}
		default:
			g.st.BadCookie.Add(1)
			return verdict{}
		}
	}
	g.st.OutOfTheBlue.Add(1)
	return verdict{reply: ootbAbort(pkt)}
}

// rwnd is the receive window we announce, as pion would (its receive buffer).
func (g *gate) rwnd() uint32 { return uint32(g.o.socketBuffer) }

// answered remembers the COOKIE ECHO an association was built from. The
// peer sends it again when our COOKIE ACK is lost; pion never saw that
// cookie, so the listener answers it itself (RFC 9260 §5.2.4 action D: the
// tags match, send COOKIE ACK again).
type answered struct {
	ack []byte
	tag uint32 // ours, which the repeated COOKIE ECHO carries
	mac [cookieMACLen]byte
}

func newAnswered(st *cookieState, echo []byte) answered {
	return answered{ack: cookieAck(echo, st.peerTag), tag: st.localTag, mac: st.mac}
}

// again reports whether pkt repeats that COOKIE ECHO, and the chunks
// bundled after it.
func (a *answered) again(pkt []byte) (rest []byte, ok bool) {
	if a.ack == nil {
		return nil, false
	}
	cookie, rest, ok := cookieEcho(pkt)
	if !ok || len(cookie) < cookieMACLen || string(cookie[len(cookie)-cookieMACLen:]) != string(a.mac[:]) ||
		binary.BigEndian.Uint32(pkt[4:]) != a.tag || !checksumOK(pkt) {
		return nil, false
	}
	return rest, true
}
