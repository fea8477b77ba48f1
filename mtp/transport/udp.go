package transport

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
)

// udpDialPath is a connected UDP socket carrying one association.
type udpDialPath struct{ c *net.UDPConn }

func (p udpDialPath) readPacket(b []byte) (int, error) { return p.c.Read(b) }
func (p udpDialPath) writePacket(b []byte) error       { _, err := p.c.Write(b); return err }
func (p udpDialPath) close() error                     { return p.c.Close() }

func dialUDP(ctx context.Context, remote netip.AddrPort, o *options) (Conn, error) {
	var laddr *net.UDPAddr
	if o.local.IsValid() {
		laddr = net.UDPAddrFromAddrPort(o.local)
	}
	uc, err := net.DialUDP("udp", laddr, net.UDPAddrFromAddrPort(remote))
	if err != nil {
		return nil, err
	}
	setBuffers(uc, o.socketBuffer)
	local := uc.LocalAddr().(*net.UDPAddr).AddrPort()
	lp, pp := pick(o.sctpLocalPort, local.Port()), pick(o.sctpPeerPort, remote.Port())
	wire := newPionWire(udpDialPath{uc}, netip.AddrPortFrom(local.Addr(), lp),
		netip.AddrPortFrom(remote.Addr(), pp), lp, pp, o.streams)
	return newPionConn(ctx, KindUDP, wire, o)
}

func pick(v, def uint16) uint16 {
	if v != 0 {
		return v
	}
	return def
}

func setBuffers(c interface {
	SetReadBuffer(int) error
	SetWriteBuffer(int) error
}, n int) {
	_ = c.SetReadBuffer(n)
	_ = c.SetWriteBuffer(n)
}

// udpListener demultiplexes one UDP socket into associations by the peer's
// UDP address (RFC 6951 §5.4: the UDP source port identifies the peer).
type udpListener struct {
	uc       *net.UDPConn
	o        *options
	g        *gate
	addr     netip.AddrPort
	sctpPort uint16

	mu      sync.Mutex
	peers   map[netip.AddrPort]*udpPeerPath
	closed  bool
	accepts chan Conn
	// released is closed once the socket is closed (after the listener and
	// its last association).
	released  chan struct{}
	closeSock sync.Once
	done      chan struct{}
	once      sync.Once
}

func listenUDP(local netip.AddrPort, o *options) (Listener, error) {
	uc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(local))
	if err != nil {
		return nil, err
	}
	setBuffers(uc, o.socketBuffer)
	addr := uc.LocalAddr().(*net.UDPAddr).AddrPort()
	l := &udpListener{
		uc: uc, o: o, g: newGate(o), addr: addr, sctpPort: pick(o.sctpLocalPort, addr.Port()),
		peers:    map[netip.AddrPort]*udpPeerPath{},
		accepts:  make(chan Conn, 16),
		released: make(chan struct{}),
		done:     make(chan struct{}),
	}
	go l.readLoop()
	return l, nil
}

func (l *udpListener) Addr() netip.AddrPort { return netip.AddrPortFrom(l.addr.Addr(), l.sctpPort) }

func (l *udpListener) Accept(ctx context.Context) (Conn, error) {
	select {
	case c := <-l.accepts:
		return c, nil
	case <-l.done:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops accepting: new INITs are dropped and associations not yet
// taken by Accept are aborted. The socket stays open for associations
// already accepted, so they can still end gracefully; it closes with the
// last of them, and Released reports when.
func (l *udpListener) Close() error {
	var unaccepted []Conn
	l.once.Do(func() {
		l.mu.Lock()
		l.closed = true
		for len(l.accepts) > 0 {
			unaccepted = append(unaccepted, <-l.accepts)
		}
		idle := len(l.peers) == 0
		l.mu.Unlock()
		close(l.done)
		if idle {
			l.releaseSocket()
		}
	})
	for _, c := range unaccepted {
		_ = c.Close()
	}
	return nil
}

// Released is closed when the listener's socket has been closed.
func (l *udpListener) Released() <-chan struct{} { return l.released }

func (l *udpListener) releaseSocket() {
	l.closeSock.Do(func() {
		_ = l.uc.Close()
		close(l.released)
	})
}

func (l *udpListener) readLoop() {
	buf := make([]byte, 1<<16)
	for {
		n, from, err := l.uc.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				l.mu.Lock()
				for _, p := range l.peers {
					p.shut()
				}
				l.mu.Unlock()
				return
			}
			continue // ICMP errors from a vanished peer
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		if n < sctpCommonHeaderLen {
			continue
		}
		l.dispatch(buf[:n], from)
	}
}

func (l *udpListener) stats() *ListenerStats { return &l.g.st }

func (l *udpListener) dispatch(pkt []byte, from netip.AddrPort) {
	l.mu.Lock()
	p, ok := l.peers[from]
	closed := l.closed
	l.mu.Unlock()
	if ok {
		p.deliver(pkt)
		return
	}
	if ct := firstChunkType(pkt); closed && (ct == chunkInit || ct == chunkCookieEcho) {
		return // closed: no new associations
	}
	v := l.g.judge(pkt, from)
	if v.reply != nil {
		_, _ = l.uc.WriteToUDPAddrPort(v.reply, from)
	}
	if v.est != nil {
		l.establish(v, pkt, from)
	}
}

// establish builds the association a verified COOKIE ECHO describes and
// queues it for Accept.
func (l *udpListener) establish(v verdict, echo []byte, from netip.AddrPort) {
	if len(l.accepts) == cap(l.accepts) || !l.g.limit.take(from.Addr()) {
		l.g.st.OverLimit.Add(1)
		_, _ = l.uc.WriteToUDPAddrPort(outOfResourceAbort(echo, v.est.peerTag), from)
		return
	}
	p := &udpPeerPath{l: l, from: from, answered: newAnswered(v.est, echo)}
	p.init()
	l.mu.Lock()
	l.peers[from] = p
	l.mu.Unlock()
	// The ports our INIT ACK answered with (the INIT's, swapped), which
	// the cookie bound: the SCTP port is l.sctpPort unless the peer
	// addressed another.
	peerPort, localPort := packetPorts(echo)
	wire := newPionWire(p, netip.AddrPortFrom(l.addr.Addr(), localPort),
		netip.AddrPortFrom(from.Addr(), peerPort), localPort, peerPort, l.o.streams)
	c, err := acceptedPionConn(KindUDP, wire, l.o, v.est)
	if err != nil {
		return // closing the wire released the path
	}
	l.g.st.Established.Add(1)
	_ = p.writePacket(p.ack)
	if v.rest != nil {
		p.push(withHeader(echo, v.rest))
	}
	// Under l.mu so Close either sees c in the queue or we see closed.
	l.mu.Lock()
	queued := false
	if !l.closed {
		select {
		case l.accepts <- c:
			queued = true
		default: // nobody accepting fast enough
		}
	}
	l.mu.Unlock()
	if !queued {
		_ = c.Close()
	}
}

func (l *udpListener) forget(p *udpPeerPath) {
	l.mu.Lock()
	if l.peers[p.from] == p {
		delete(l.peers, p.from)
		l.g.limit.give(p.from.Addr())
	}
	last := l.closed && len(l.peers) == 0
	l.mu.Unlock()
	if last {
		l.releaseSocket()
	}
}

// udpPeerPath is one association's share of the listener socket.
type udpPeerPath struct {
	inbox
	answered
	l    *udpListener
	from netip.AddrPort
}

// deliver queues a packet for the association, answering a repeated COOKIE
// ECHO itself.
func (p *udpPeerPath) deliver(pkt []byte) {
	if rest, ok := p.again(pkt); ok {
		_ = p.writePacket(p.ack)
		if rest != nil {
			p.push(withHeader(pkt, rest))
		}
		return
	}
	p.push(pkt)
}

func (p *udpPeerPath) writePacket(b []byte) error {
	if err := p.closedErr(); err != nil {
		return err
	}
	_, err := p.l.uc.WriteToUDPAddrPort(b, p.from)
	return err
}

func (p *udpPeerPath) shut() { p.once.Do(func() { close(p.done) }) }

func (p *udpPeerPath) close() error {
	p.shut()
	p.l.forget(p)
	return nil
}
