package transport

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// floodSender sends hand-made SCTP packets to a listener from one loopback
// source address, as udp datagrams or raw IP protocol 132. Each call to
// send comes from a new source port, as a flood with forged sources would,
// so each packet looks like a new peer.
type floodSender interface {
	// send sends the packet mk makes for the source port it is given.
	send(mk func(srcPort uint16) []byte) error
	close()
}

type udpSender struct {
	src netip.AddrPort
	to  *net.UDPAddr
}

func (s udpSender) send(mk func(uint16) []byte) error {
	c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(s.src), s.to)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write(mk(uint16(c.LocalAddr().(*net.UDPAddr).Port)))
	return err
}
func (s udpSender) close() {}

type rawSender struct {
	c  *net.IPConn
	to *net.IPAddr
}

func (s rawSender) send(mk func(uint16) []byte) error {
	_, err := s.c.WriteToIP(mk(uint16(1024+rand.IntN(60000))), s.to)
	return err
}
func (s rawSender) close() { _ = s.c.Close() }

// newSender sends from src to ln. Binding to 127.0.0.x is how the test
// forges sources on loopback.
func newSender(t *testing.T, kind Kind, src netip.Addr, ln Listener) floodSender {
	t.Helper()
	switch kind {
	case KindUDP:
		return udpSender{src: netip.AddrPortFrom(src, 0), to: net.UDPAddrFromAddrPort(ln.Addr())}
	case KindRaw:
		c, err := net.ListenIP("ip4:132", &net.IPAddr{IP: src.AsSlice()})
		if err != nil {
			t.Fatal(err)
		}
		return rawSender{c: c, to: &net.IPAddr{IP: ln.Addr().Addr().AsSlice()}}
	}
	t.Fatalf("no sender for %v", kind)
	return nil
}

// rawInit is an INIT from srcPort to dstPort with a random initiate tag,
// its checksum right or deliberately wrong.
func rawInit(srcPort, dstPort uint16, goodCRC bool) []byte {
	p := make([]byte, sctpCommonHeaderLen+4+initFixedLen)
	c := p[sctpCommonHeaderLen:]
	c[0] = chunkInit
	binary.BigEndian.PutUint16(c[2:], 4+initFixedLen)
	binary.BigEndian.PutUint32(c[4:], nonZeroRandom())
	binary.BigEndian.PutUint32(c[8:], 1<<20)
	binary.BigEndian.PutUint16(c[12:], 16)
	binary.BigEndian.PutUint16(c[14:], 16)
	binary.BigEndian.PutUint32(c[16:], rand.Uint32())
	setPorts(p, srcPort, dstPort)
	if !goodCRC {
		p[8] ^= 0xff
	}
	return p
}

// rawCookieEcho is a COOKIE ECHO carrying a made-up cookie.
func rawCookieEcho(srcPort, dstPort uint16, vtag uint32, cookie []byte) []byte {
	p := make([]byte, sctpCommonHeaderLen+4+(len(cookie)+3)&^3)
	binary.BigEndian.PutUint32(p[4:], vtag)
	c := p[sctpCommonHeaderLen:]
	c[0] = chunkCookieEcho
	binary.BigEndian.PutUint16(c[2:], uint16(4+len(cookie)))
	copy(c[4:], cookie)
	setPorts(p, srcPort, dstPort)
	return p
}

type memSample struct{ heap, goroutines uint64 }

func sampleMem() memSample {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/sched/goroutines:goroutines"}}
	metrics.Read(s)
	return memSample{heap: s[0].Value.Uint64(), goroutines: s[1].Value.Uint64()}
}

func (m memSample) String() string {
	return fmt.Sprintf("heap %.1f MB, %d goroutines", float64(m.heap)/(1<<20), m.goroutines)
}

// waitCounted waits until the listener has judged n packets, so the flood
// goes in steps the socket buffer holds and every packet is accounted for.
func waitCounted(t *testing.T, st *ListenerStats, n uint64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for judged(st) < n {
		if time.Now().After(deadline) {
			t.Fatalf("listener judged %d of %d packets", judged(st), n)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

func judged(st *ListenerStats) uint64 {
	return st.UnknownAddress.Load() + st.BadChecksum.Load() + st.BadInit.Load() + st.BadCookie.Load() +
		st.StaleCookie.Load() + st.OverLimit.Load() + st.OutOfTheBlue.Load() + st.InitAcks.Load()
}

// TestINITFloodCostsNoStateWhileTrafficFlows floods a listener with 10,000
// INITs (from its configured peer's address and from four unconfigured
// ones, half with a wrong CRC32c) and 1,000 COOKIE ECHOs with forged
// cookies, while a live association carries numbered messages. No INIT
// builds state (RFC 9260 §5.1 step C), so heap and goroutines stay flat,
// every message arrives in order, and each packet is counted once under
// the reason it was dropped or answered.
func TestINITFloodCostsNoStateWhileTrafficFlows(t *testing.T) {
	for _, kind := range testKinds(t) {
		t.Run(kind.String(), func(t *testing.T) { initFlood(t, kind, 10000) })
	}
}

func initFlood(t *testing.T, kind Kind, inits int) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	configured := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")}
	filter := WithAcceptFilter(func(r netip.AddrPort) bool {
		return r.Addr() == configured[0] || r.Addr() == configured[1]
	})
	ln, err := Listen(kind, loopback, filter)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	st := StatsOf(ln)
	accepted := make(chan Conn, 1)
	go func() { c, _ := ln.Accept(ctx); accepted <- c }()
	client, err := Dial(ctx, kind, ln.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server := <-accepted
	if server == nil {
		t.Fatal("live association not accepted")
	}
	defer server.Close()
	base := judged(st)

	// Live traffic: numbered messages, a batch per step of the flood so
	// they flow all through it, each checked on arrival.
	const step, perStep = 100, 200
	live := inits / step * perStep
	steps := make(chan struct{}, 1)
	sent := make(chan error, 1)
	go func() {
		i := 0
		for range steps {
			for end := i + perStep; i < end; i++ {
				if err := client.WriteMsg([]byte(fmt.Sprint(i)), uint16(1+i%3), PPIDM3UA); err != nil {
					sent <- err
					for range steps {
					}
					return
				}
			}
		}
		sent <- nil
	}()
	received := make(chan error, 1)
	go func() {
		next := map[uint16]int{}
		buf := make([]byte, 64)
		for k := 0; k < live; k++ {
			n, stream, _, err := server.ReadMsg(buf)
			if err != nil {
				received <- fmt.Errorf("after %d messages: %w", k, err)
				return
			}
			var i int
			if _, err := fmt.Sscan(string(buf[:n]), &i); err != nil || i%3 != int(stream-1) ||
				(next[stream] != 0 && i != next[stream]) {
				received <- fmt.Errorf("stream %d: message %q after %d", stream, buf[:n], next[stream]-3)
				return
			}
			next[stream] = i + 3
		}
		received <- nil
	}()

	runtime.GC()
	before := sampleMem()
	peak := before
	srcs := []netip.Addr{configured[1], netip.MustParseAddr("127.0.0.3"), netip.MustParseAddr("127.0.0.4"),
		netip.MustParseAddr("127.0.0.5"), netip.MustParseAddr("127.0.0.6")}
	senders := make([]floodSender, len(srcs))
	for i, a := range srcs {
		senders[i] = newSender(t, kind, a, ln)
		defer senders[i].close()
	}
	var want ListenerStats
	dst := ln.Addr().Port()
	for i := 0; i < inits; i++ {
		s, good := i%len(srcs), i%2 == 0
		switch {
		case s != 0:
			want.UnknownAddress.Add(1)
		case good:
			want.InitAcks.Add(1)
		default:
			want.BadChecksum.Add(1)
		}
		if err := senders[s].send(func(src uint16) []byte { return rawInit(src, dst, good) }); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 { // a forged cookie from the configured address
			cookie := make([]byte, 64+rand.IntN(200))
			for j := range cookie {
				cookie[j] = byte(rand.Uint32())
			}
			want.BadCookie.Add(1)
			vtag := rand.Uint32()
			if err := senders[0].send(func(src uint16) []byte { return rawCookieEcho(src, dst, vtag, cookie) }); err != nil {
				t.Fatal(err)
			}
		}
		if i%step == step-1 {
			steps <- struct{}{}
			waitCounted(t, st, base+judged(&want))
			if m := sampleMem(); m.heap > peak.heap {
				peak.heap = m.heap
			}
			if m := sampleMem(); m.goroutines > peak.goroutines {
				peak.goroutines = m.goroutines
			}
		}
	}
	close(steps)
	waitCounted(t, st, base+judged(&want))
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if err := <-received; err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	after := sampleMem()
	t.Logf("%s: %d INITs and %d forged COOKIE ECHOs, %d live messages; before: %v; peak during: %v; after: %v",
		kind, inits, want.BadCookie.Load(), live, before, peak, after)

	for _, c := range []struct {
		name      string
		got, want uint64
	}{
		{"unknown address", st.UnknownAddress.Load(), want.UnknownAddress.Load()},
		{"bad checksum", st.BadChecksum.Load(), want.BadChecksum.Load()},
		{"INIT ACKs", st.InitAcks.Load(), want.InitAcks.Load() + 1}, // + the live association's
		{"bad cookie", st.BadCookie.Load(), want.BadCookie.Load()},
		{"established", st.Established.Load(), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s: counted %d, want %d", c.name, c.got, c.want)
		}
	}
	// Generous bounds: the flood built nothing, so what grows is garbage
	// and pion's buffers for the live traffic. Before the stateless
	// cookie, each INIT cost about 460 KB and 5 goroutines.
	if grown := int64(peak.heap) - int64(before.heap); grown > 64<<20 {
		t.Errorf("heap grew %d MB during the flood", grown>>20)
	}
	if grown := int64(peak.goroutines) - int64(before.goroutines); grown > 20 {
		t.Errorf("goroutines grew by %d during the flood", grown)
	}
}
