package transport

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"net/netip"
	"testing"
	"time"
)

// forger sends SCTP packets that claim to come from a given address and
// port: as raw IP protocol 132, or as UDP datagrams whose UDP header it
// writes itself (a raw "ip4:udp" socket), so the source port is whatever
// it likes.
type forger struct {
	kind Kind
	c    *net.IPConn
}

func newForger(t *testing.T, kind Kind, src netip.Addr) *forger {
	t.Helper()
	proto := "ip4:132"
	if kind == KindUDP {
		proto = "ip4:udp"
	}
	c, err := net.ListenIP(proto, &net.IPAddr{IP: src.AsSlice()})
	if err != nil {
		t.Skipf("cannot forge packets: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &forger{kind: kind, c: c}
}

// send sends chunk from (src, as its SCTP and UDP port) to to with vtag.
func (f *forger) send(t *testing.T, from, to netip.AddrPort, vtag uint32, chunk []byte) {
	t.Helper()
	p := make([]byte, sctpCommonHeaderLen+len(chunk))
	binary.BigEndian.PutUint32(p[4:], vtag)
	copy(p[sctpCommonHeaderLen:], chunk)
	setPorts(p, from.Port(), to.Port())
	if f.kind == KindUDP {
		u := make([]byte, 8, 8+len(p))
		binary.BigEndian.PutUint16(u[0:], from.Port())
		binary.BigEndian.PutUint16(u[2:], to.Port())
		binary.BigEndian.PutUint16(u[4:], uint16(8+len(p))) // checksum 0: none (IPv4)
		p = append(u, p...)
	}
	if _, err := f.c.WriteToIP(p, &net.IPAddr{IP: to.Addr().AsSlice()}); err != nil {
		t.Fatal(err)
	}
}

// TestForgedTagsIgnored: packets forged with the peer's exact address and
// ports but a wrong verification tag (ABORT with and without the T bit,
// SHUTDOWN, DATA) are dropped at either end of a live association (RFC
// 9260 §8.5, §8.5.1), so messages keep flowing both ways; a real ABORT
// still ends it.
func TestForgedTagsIgnored(t *testing.T) {
	for _, kind := range testKinds(t) {
		t.Run(kind.String(), func(t *testing.T) {
			c, s := pair(t, kind)
			f := newForger(t, kind, netip.MustParseAddr("127.0.0.1"))
			data := []byte{0, 3, 0, 20, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 3, 'b', 'a', 'd', '!'}
			for _, end := range []struct {
				name     string
				from, to netip.AddrPort
			}{{"to server", c.LocalAddr(), s.LocalAddr()}, {"to client", s.LocalAddr(), c.LocalAddr()}} {
				for _, ch := range [][]byte{{chunkAbort, 0, 0, 4}, {chunkAbort, 1, 0, 4}, {7, 0, 0, 8, 0, 0, 0, 0}, data} {
					f.send(t, end.from, end.to, rand.Uint32()|1, ch)
				}
			}
			buf := make([]byte, 64)
			for i, dir := range []struct{ from, to Conn }{{c, s}, {s, c}, {c, s}} {
				if err := dir.from.WriteMsg([]byte("still here"), 1, PPIDM3UA); err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
				if n, _, _, err := dir.to.ReadMsg(buf); err != nil || string(buf[:n]) != "still here" {
					t.Fatalf("read %d: %q %v", i, buf[:n], err)
				}
			}
			if w := s.(*pionConn).wire.badTag.Load(); w < 4 {
				t.Fatalf("server dropped %d packets for their tag, want 4", w)
			}
			_ = c.Close() // a real ABORT
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() { _, _, _, err := s.ReadMsg(buf); done <- err }()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("read a message after ABORT")
				}
			case <-ctx.Done():
				t.Fatal("a real ABORT did not end the association")
			}
		})
	}
}

// TestRestartAdoptsNewTag: a peer that restarts (a new INIT from the same
// address and port, RFC 9260 §5.2.2) gets pion's restart INIT ACK; once its
// COOKIE ECHO is accepted the association takes the new verification tag,
// and a packet with the old one is dropped.
func TestRestartAdoptsNewTag(t *testing.T) {
	ln, err := Listen(KindUDP, loopback)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p := newHandPeer(t, "127.0.0.2:0", ln)
	init := rawInit(p.port, p.dst, true)
	p.send(init)
	oldTag, cookie := initAckCookie(t, p.next(), binary.BigEndian.Uint32(init[sctpCommonHeaderLen+4:]))
	p.send(rawCookieEcho(p.port, p.dst, oldTag, cookie))
	if ack := p.next(); firstChunkType(ack) != chunkCookieAck {
		t.Fatalf("want COOKIE ACK, got %x", ack)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	init = rawInit(p.port, p.dst, true)
	newPeerTag := binary.BigEndian.Uint32(init[sctpCommonHeaderLen+4:])
	p.send(init)
	newTag, cookie := initAckCookie(t, p.next(), newPeerTag)
	if newTag == oldTag {
		t.Fatal("restart kept the old tag")
	}
	p.send(rawCookieEcho(p.port, p.dst, newTag, cookie))
	if ack := p.next(); firstChunkType(ack) != chunkCookieAck || binary.BigEndian.Uint32(ack[4:]) != newPeerTag {
		t.Fatalf("want COOKIE ACK to the new tag %08x, got %x", newPeerTag, ack)
	}
	hb := func(vtag uint32, info string) []byte {
		ch := append([]byte{4, 0, 0, 12, 0, 1, 0, 8}, info...)
		return withHeader(rawCookieEcho(p.port, p.dst, vtag, nil), ch)
	}
	p.send(hb(oldTag, "oldt"))
	p.send(hb(newTag, "newt"))
	if a := p.next(); firstChunkType(a) != 5 || string(a[len(a)-4:]) != "newt" {
		t.Fatalf("want HEARTBEAT ACK to the new-tag HEARTBEAT only, got %x", a)
	}
}
