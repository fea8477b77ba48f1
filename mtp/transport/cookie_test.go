package transport

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// fakeClock is the time the listener's cookies are stamped and checked with.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// handPeer is a UDP socket that speaks hand-made SCTP to a listener.
type handPeer struct {
	t    *testing.T
	c    *net.UDPConn
	port uint16 // its SCTP port (= UDP port)
	dst  uint16
}

func newHandPeer(t *testing.T, src string, ln Listener) *handPeer {
	t.Helper()
	c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(src)), net.UDPAddrFromAddrPort(ln.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &handPeer{t: t, c: c, port: uint16(c.LocalAddr().(*net.UDPAddr).Port), dst: ln.Addr().Port()}
}

func (p *handPeer) send(b []byte) {
	p.t.Helper()
	if _, err := p.c.Write(b); err != nil {
		p.t.Fatal(err)
	}
}

// next is the next packet from the listener, which must have a good CRC.
func (p *handPeer) next() []byte {
	p.t.Helper()
	_ = p.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b := make([]byte, 2048)
	n, err := p.c.Read(b)
	if err != nil {
		p.t.Fatalf("no answer: %v", err)
	}
	if !checksumOK(b[:n]) {
		p.t.Fatalf("answer with a bad checksum: %x", b[:n])
	}
	return b[:n]
}

// initAckCookie checks an INIT ACK and returns its tag and State Cookie.
func initAckCookie(t *testing.T, p []byte, wantVtag uint32) (tag uint32, cookie []byte) {
	t.Helper()
	if firstChunkType(p) != chunkInitAck || binary.BigEndian.Uint32(p[4:]) != wantVtag {
		t.Fatalf("not an INIT ACK to tag %08x: %x", wantVtag, p)
	}
	c := p[sctpCommonHeaderLen:]
	clen := int(binary.BigEndian.Uint16(c[2:]))
	for off := 4 + initFixedLen; off+4 <= clen; {
		pt, pl := binary.BigEndian.Uint16(c[off:]), int(binary.BigEndian.Uint16(c[off+2:]))
		if pl < 4 || off+pl > clen {
			t.Fatalf("bad parameter at %d: %x", off, c)
		}
		if pt == paramStateCookie {
			cookie = append([]byte(nil), c[off+4:off+pl]...)
		}
		off += (pl + 3) &^ 3
	}
	if cookie == nil {
		t.Fatalf("INIT ACK without a State Cookie: %x", p)
	}
	return binary.BigEndian.Uint32(c[4:]), cookie
}

// heartbeat is a HEARTBEAT chunk (RFC 9260 §3.3.5) pion answers with
// HEARTBEAT ACK: proof that chunks bundled after COOKIE ECHO reach the
// association.
var heartbeat = []byte{4, 0, 0, 12, 0, 1, 0, 8, 'p', 'i', 'n', 'g'}

func udpPeers(ln Listener) int {
	l := ln.(*udpListener)
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.peers)
}

// TestCookieHandshake drives a udp listener by hand through RFC 9260
// §5.1: an INIT is answered with an INIT ACK and leaves no state; COOKIE
// ECHOs with a tampered cookie, a wrong verification tag or from another
// source port are dropped and counted (§5.1.5 steps 1-3); the right one
// builds the association, is answered with COOKIE ACK and delivers the
// chunk bundled with it; a repeated one is answered again without a second
// association (§5.2.4 D); a cookie past its life gets ERROR "Stale Cookie"
// with the staleness in microseconds (§5.1.5 step 4, §3.3.10.3).
func TestCookieHandshake(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	ln, err := Listen(KindUDP, loopback, withClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	st := StatsOf(ln)
	p := newHandPeer(t, "127.0.0.2:0", ln)

	init := rawInit(p.port, p.dst, true)
	peerTag := binary.BigEndian.Uint32(init[sctpCommonHeaderLen+4:])
	p.send(init)
	tag, cookie := initAckCookie(t, p.next(), peerTag)
	if n := udpPeers(ln); n != 0 || st.InitAcks.Load() != 1 {
		t.Fatalf("after INIT: %d peers, %d INIT ACKs", n, st.InitAcks.Load())
	}

	tampered := append([]byte(nil), cookie...)
	tampered[len(tampered)/2] ^= 1
	p.send(rawCookieEcho(p.port, p.dst, tag, tampered))
	p.send(rawCookieEcho(p.port, p.dst, tag+1, cookie))
	other := newHandPeer(t, "127.0.0.2:0", ln)
	other.send(rawCookieEcho(other.port, other.dst, tag, cookie))
	waitCounted(t, st, 4)
	if st.BadCookie.Load() != 3 || udpPeers(ln) != 0 {
		t.Fatalf("bad cookies counted %d, %d peers", st.BadCookie.Load(), udpPeers(ln))
	}

	echo := rawCookieEcho(p.port, p.dst, tag, cookie)
	echo = withHeader(echo, append(append([]byte(nil), echo[sctpCommonHeaderLen:]...), heartbeat...))
	p.send(echo)
	// Nothing was answered to the bad cookies: COOKIE ACK comes first.
	if ack := p.next(); firstChunkType(ack) != chunkCookieAck || binary.BigEndian.Uint32(ack[4:]) != peerTag {
		t.Fatalf("want COOKIE ACK to %08x, got %x", peerTag, ack)
	}
	if hb := p.next(); firstChunkType(hb) != 5 || string(hb[len(hb)-4:]) != "ping" {
		t.Fatalf("want HEARTBEAT ACK, got %x", hb)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.OutboundStreams(); got != 16 {
		t.Fatalf("outbound streams %d, want 16 (the peer's MIS and ours)", got)
	}

	p.send(rawCookieEcho(p.port, p.dst, tag, cookie))
	if ack := p.next(); firstChunkType(ack) != chunkCookieAck {
		t.Fatalf("repeated COOKIE ECHO: want COOKIE ACK, got %x", ack)
	}
	if st.Established.Load() != 1 || udpPeers(ln) != 1 {
		t.Fatalf("%d established, %d peers", st.Established.Load(), udpPeers(ln))
	}

	late := newHandPeer(t, "127.0.0.2:0", ln)
	init = rawInit(late.port, late.dst, true)
	peerTag = binary.BigEndian.Uint32(init[sctpCommonHeaderLen+4:])
	late.send(init)
	tag, cookie = initAckCookie(t, late.next(), peerTag)
	clock.add(DefaultCookieLife + time.Second)
	late.send(rawCookieEcho(late.port, late.dst, tag, cookie))
	e := late.next()
	if firstChunkType(e) != chunkError || binary.BigEndian.Uint32(e[4:]) != peerTag ||
		binary.BigEndian.Uint16(e[sctpCommonHeaderLen+4:]) != causeStaleCookie ||
		binary.BigEndian.Uint32(e[sctpCommonHeaderLen+8:]) != 1_000_000 {
		t.Fatalf("want ERROR Stale Cookie, 1 s late, got %x", e)
	}
	if st.StaleCookie.Load() != 1 || udpPeers(ln) != 1 {
		t.Fatalf("stale counted %d, %d peers", st.StaleCookie.Load(), udpPeers(ln))
	}
}

// TestAcceptFilterFirst: a packet from an address the filter refuses is
// counted as such whatever else is wrong with it, and gets no answer; a
// bad checksum from an accepted address is counted as that.
func TestAcceptFilterFirst(t *testing.T) {
	ok := netip.MustParseAddr("127.0.0.2")
	ln, err := Listen(KindUDP, loopback, WithAcceptFilter(func(r netip.AddrPort) bool { return r.Addr() == ok }))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	st := StatsOf(ln)
	stranger := newHandPeer(t, "127.0.0.3:0", ln)
	stranger.send(rawInit(stranger.port, stranger.dst, true))
	stranger.send(rawInit(stranger.port, stranger.dst, false))
	friend := newHandPeer(t, "127.0.0.2:0", ln)
	friend.send(rawInit(friend.port, friend.dst, false))
	good := rawInit(friend.port, friend.dst, true)
	friend.send(good)
	initAckCookie(t, friend.next(), binary.BigEndian.Uint32(good[sctpCommonHeaderLen+4:]))
	if st.UnknownAddress.Load() != 2 || st.BadChecksum.Load() != 1 || st.InitAcks.Load() != 1 {
		t.Fatalf("unknown %d, bad CRC %d, INIT ACKs %d", st.UnknownAddress.Load(), st.BadChecksum.Load(), st.InitAcks.Load())
	}
	_ = stranger.c.SetReadDeadline(time.Now())
	if n, err := stranger.c.Read(make([]byte, 64)); err == nil {
		t.Fatalf("the stranger got %d bytes", n)
	}
}

// TestAssociationLimits: past the per-address and the total limit a
// verified COOKIE ECHO is refused (the dial fails) and counted; a closed
// association gives its place back.
func TestAssociationLimits(t *testing.T) {
	for _, kind := range testKinds(t) {
		t.Run(kind.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ln, err := Listen(kind, loopback, WithAssociationLimits(2, 1))
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			st := StatsOf(ln)
			dial := func(src string) (Conn, Conn, error) {
				c, err := Dial(ctx, kind, ln.Addr(), WithLocalAddr(netip.MustParseAddrPort(src+":0")))
				if err != nil {
					return nil, nil, err
				}
				s, err := ln.Accept(ctx)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = c.Close(); _ = s.Close() })
				return c, s, nil
			}
			_, s1, err := dial("127.0.0.1")
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := dial("127.0.0.1"); err == nil || st.OverLimit.Load() != 1 {
				t.Fatalf("second from one address: %v, over limit %d", err, st.OverLimit.Load())
			}
			if _, _, err := dial("127.0.0.2"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := dial("127.0.0.3"); err == nil || st.OverLimit.Load() != 2 {
				t.Fatalf("third in all: %v, over limit %d", err, st.OverLimit.Load())
			}
			_ = s1.Close()
			if _, _, err := dial("127.0.0.1"); err != nil {
				t.Fatalf("after a close: %v", err)
			}
		})
	}
}

// TestCookieKeyRotates: the cookie key changes every cookie life (RFC
// 9260 §5.1.3); a cookie made just before a change still verifies within
// its life, and one made two keys ago no longer verifies at all (counted
// as a bad cookie, not a stale one: its key is gone).
func TestCookieKeyRotates(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	ln, err := Listen(KindUDP, loopback, withClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	st := StatsOf(ln)
	handshake := func() (*handPeer, uint32, []byte) {
		p := newHandPeer(t, "127.0.0.2:0", ln)
		init := rawInit(p.port, p.dst, true)
		p.send(init)
		tag, cookie := initAckCookie(t, p.next(), binary.BigEndian.Uint32(init[sctpCommonHeaderLen+4:]))
		return p, tag, cookie
	}
	old, oldTag, oldCookie := handshake()
	clock.add(DefaultCookieLife - time.Second)
	p, tag, cookie := handshake()
	clock.add(2 * time.Second) // the key changes with the next cookie
	handshake()
	p.send(rawCookieEcho(p.port, p.dst, tag, cookie))
	if ack := p.next(); firstChunkType(ack) != chunkCookieAck {
		t.Fatalf("cookie from the previous key: want COOKIE ACK, got %x", ack)
	}
	clock.add(2 * DefaultCookieLife)
	handshake() // and changes again
	old.send(rawCookieEcho(old.port, old.dst, oldTag, oldCookie))
	waitCounted(t, st, 5)
	if st.BadCookie.Load() != 1 || st.StaleCookie.Load() != 0 {
		t.Fatalf("bad %d stale %d", st.BadCookie.Load(), st.StaleCookie.Load())
	}
}
