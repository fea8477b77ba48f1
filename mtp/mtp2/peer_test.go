package mtp2

import (
	"encoding/binary"
	"net"
	"testing"
	"time"
)

// q703Peer is the far end of a lab link, written here from Q.703 and
// independent of the machine under test (it encodes signal units by hand):
// alignment as Figure 9 has it (SIO answered with SIN, SIN starts proving,
// a FISU at its end), then basic error correction: every MSU accepted in
// sequence is acknowledged with a FISU carrying its FSN as BSN; a gap is
// answered by inverting BIB (negative acknowledgement) and MSUs are
// discarded until one arrives with FIB equal to the new BIB (§5.2.2).
type q703Peer struct {
	c        *net.UnixConn
	dropFSN  int // drop this FSN once (as if corrupted), -1 for none
	proving  time.Duration
	got      chan []byte   // MSUs accepted
	inSvc    chan struct{} // closed when in service
	toSend   chan []byte
	sendSIOS chan struct{}
	nacks    int
	acked    chan uint8 // BSNs received from the link under test, in service
}

func newPeer(c *net.UnixConn) *q703Peer {
	return &q703Peer{c: c, dropFSN: -1, proving: 50 * time.Millisecond, got: make(chan []byte, 1024),
		inSvc: make(chan struct{}), toSend: make(chan []byte, 1024), sendSIOS: make(chan struct{}), acked: make(chan uint8, 4096)}
}

func (p *q703Peer) run(t *testing.T) {
	reads := make(chan []byte, 64)
	go func() {
		defer close(reads)
		buf := make([]byte, 512)
		for {
			n, err := p.c.Read(buf)
			if err != nil || n == 0 {
				return
			}
			reads <- append([]byte(nil), buf[:n]...)
		}
	}()
	const (
		idle = iota
		aligned
		proving
		ready
		inService
	)
	st := idle
	var fsn, bsn uint8 = 127, 127
	fib, bib := true, true
	dropped := false
	hdr := func() (byte, byte) {
		h0, h1 := bsn, fsn
		if bib {
			h0 |= 0x80
		}
		if fib {
			h1 |= 0x80
		}
		return h0, h1
	}
	write := func(b []byte) { _, _ = p.c.Write(b) } // fails only once the test closes the socket
	lssu := func(s byte) { h0, h1 := hdr(); write([]byte{h0, h1, 1, s, 0, 0}) }
	fisu := func() { h0, h1 := hdr(); write([]byte{h0, h1, 0, 0, 0}) }
	var provingEnd <-chan time.Time
	for {
		select {
		case <-p.sendSIOS:
			lssu(3)
			st = idle
		case <-provingEnd:
			provingEnd = nil
			fisu()
			st = ready
		case msu := <-p.toSend:
			if st != inService {
				continue // the test sends only once in service
			}
			fsn = (fsn + 1) & 0x7F
			h0, h1 := hdr()
			li := byte(min(len(msu), 63))
			write(append(append([]byte{h0, h1, li}, msu...), 0, 0))
		case b, ok := <-reads:
			if !ok {
				return
			}
			if len(b) < 5 {
				t.Errorf("peer got %d octets", len(b))
				continue
			}
			li := b[2] & 0x3F
			rbsn, rbib := b[0]&0x7F, b[0]&0x80 != 0
			rfsn, rfib := b[1]&0x7F, b[1]&0x80 != 0
			_ = rbib
			if li == 1 || li == 2 {
				switch s := b[3]; {
				case s == 0 && st == idle: // SIO
					lssu(1) // SIN
					st = aligned
				case (s == 1 || s == 2) && (st == idle || st == aligned):
					if st == idle {
						lssu(1)
					}
					st = proving
					provingEnd = time.After(p.proving)
				}
				continue
			}
			if st == ready {
				st = inService
				close(p.inSvc)
			}
			if st != inService {
				continue
			}
			select {
			case p.acked <- rbsn:
			default:
			}
			if li == 0 {
				continue // FISU
			}
			if rfib != bib {
				continue // waiting for our retransmission request to be honoured
			}
			if rfsn == bsn {
				continue // repeat
			}
			if rfsn != (bsn+1)&0x7F {
				bib = !bib // negative acknowledgement
				p.nacks++
				fisu()
				continue
			}
			if int(rfsn) == p.dropFSN && !dropped {
				dropped = true // lost on the line
				continue
			}
			bsn = rfsn
			p.got <- append([]byte(nil), b[3:len(b)-2]...)
			fisu() // acknowledge at once, as libss7 does
		}
	}
}

type chanUser struct {
	ev  chan string
	msu chan []byte
}

func (u *chanUser) InService()                    { u.ev <- "in service" }
func (u *chanUser) OutOfService(string)           { u.ev <- "out of service" }
func (u *chanUser) Received(m []byte)             { u.msu <- append([]byte(nil), m...) }
func (u *chanUser) RemoteProcessorOutage(on bool) {}
func (u *chanUser) Congested(on bool)             {}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var z T
	return z
}

// TestSocketLinkAgainstQ703Peer runs the link over a real SOCK_SEQPACKET
// socketpair against the peer above: alignment, MSUs both ways in order,
// a lost MSU recovered by negative acknowledgement and retransmission, and
// SIOS from the peer taking the link out of service.
func TestSocketLinkAgainstQ703Peer(t *testing.T) {
	ours, theirs, err := Socketpair()
	if err != nil {
		t.Fatal(err)
	}
	tm := DefaultTimers()
	tm.T4N = 30 * time.Millisecond
	tm.Repeat = 100 * time.Millisecond
	l, err := New(Config{Name: "lab", Conn: ours, Timers: tm})
	if err != nil {
		t.Fatal(err)
	}
	peer := newPeer(theirs)
	peer.dropFSN = 5
	peerDone := make(chan struct{})
	go func() { defer close(peerDone); peer.run(t) }()
	if err := l.Open(); err != nil {
		t.Fatal(err)
	}
	defer func() { l.Close(); theirs.Close(); <-peerDone }()
	u := &chanUser{ev: make(chan string, 16), msu: make(chan []byte, 1024)}
	l.Start(u)
	if e := recv(t, u.ev, "in service"); e != "in service" {
		t.Fatal(e)
	}
	recv(t, peer.inSvc, "peer in service")
	const n = 300 // more than the 127-MSU window
	for i := range n {
		msu := []byte{0x85, 2, 0x40, 0, 0, 0, 0}
		binary.BigEndian.PutUint16(msu[5:], uint16(i))
		if err := l.Send(0, msu); err != nil {
			t.Fatal(err)
		}
		peer.toSend <- msu
	}
	for i := range n {
		a := recv(t, peer.got, "MSU at the peer")
		b := recv(t, u.msu, "MSU at the link")
		if int(binary.BigEndian.Uint16(a[5:])) != i || int(binary.BigEndian.Uint16(b[5:])) != i {
			t.Fatalf("MSU %d: peer got %d, link got %d", i, binary.BigEndian.Uint16(a[5:]), binary.BigEndian.Uint16(b[5:]))
		}
	}
	if l.Stats().Retransmitted.Load() == 0 {
		t.Fatal("the lost MSU was not retransmitted")
	}
	// The link acknowledged the peer's last MSU: its BSN reaches
	// (127 + n) mod 128.
	want := uint8((127 + n) & 0x7F)
	for {
		if recv(t, peer.acked, "acknowledgement of the peer's last MSU") == want {
			break
		}
	}
	close(peer.sendSIOS)
	if e := recv(t, u.ev, "out of service on SIOS"); e != "out of service" {
		t.Fatal(e)
	}
}
