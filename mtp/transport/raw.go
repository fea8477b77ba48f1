package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
)

// The raw transport sends pion's SCTP packets as genuine IP protocol 132
// datagrams. One raw socket per local address and process is shared by all
// associations on that address and demultiplexed by SCTP ports, as a kernel
// SCTP stack would.

const ipProtoSCTP = 132

type rawKey struct {
	remote     netip.Addr
	remotePort uint16
	localPort  uint16
}

// rawMux owns the raw socket of one local address.
type rawMux struct {
	local netip.Addr
	ipc   *net.IPConn
	refs  int

	mu        sync.Mutex
	paths     map[rawKey]*rawPath
	listeners map[uint16]*rawListener
	owned     map[uint16]bool // local SCTP ports in use by this process
}

var (
	rawMuxMu sync.Mutex
	rawMuxes = map[netip.Addr]*rawMux{}
)

func acquireRawMux(local netip.Addr, o *options) (*rawMux, error) {
	rawMuxMu.Lock()
	defer rawMuxMu.Unlock()
	if m, ok := rawMuxes[local]; ok {
		m.refs++
		return m, nil
	}
	network := "ip4:132"
	if local.Is6() {
		network = "ip6:132"
	}
	ipc, err := net.ListenIP(network, &net.IPAddr{IP: local.AsSlice()})
	if err != nil {
		return nil, fmt.Errorf("transport raw: %w (needs CAP_NET_RAW; use transport \"udp\" otherwise)", err)
	}
	setBuffers(ipc, o.socketBuffer)
	m := &rawMux{local: local, ipc: ipc, refs: 1,
		paths: map[rawKey]*rawPath{}, listeners: map[uint16]*rawListener{}, owned: map[uint16]bool{}}
	rawMuxes[local] = m
	go m.readLoop()
	return m, nil
}

func (m *rawMux) release() {
	rawMuxMu.Lock()
	defer rawMuxMu.Unlock()
	m.refs--
	if m.refs == 0 {
		delete(rawMuxes, m.local)
		_ = m.ipc.Close()
	}
}

func (m *rawMux) readLoop() {
	buf := make([]byte, 1<<16)
	for {
		n, from, err := m.ipc.ReadFromIP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if n < sctpCommonHeaderLen {
			continue
		}
		ra, ok := netip.AddrFromSlice(from.IP)
		if !ok {
			continue
		}
		m.dispatch(buf[:n], ra.Unmap())
	}
}

func (m *rawMux) dispatch(pkt []byte, from netip.Addr) {
	src, dst := packetPorts(pkt)
	key := rawKey{remote: from, remotePort: src, localPort: dst}
	m.mu.Lock()
	p, ok := m.paths[key]
	l := m.listeners[dst]
	owned := m.owned[dst]
	m.mu.Unlock()
	if ok {
		p.deliver(pkt)
		return
	}
	if l != nil {
		v := l.g.judge(pkt, netip.AddrPortFrom(from, src))
		if v.reply != nil {
			_, _ = m.ipc.WriteToIP(v.reply, &net.IPAddr{IP: from.AsSlice()})
		}
		if v.est != nil {
			l.establish(v, pkt, key)
		}
		return
	}
	// Out of the blue (RFC 9260 §8.4): answer only for ports this process
	// owns; other ports may belong to another process's raw socket.
	if owned {
		if a := ootbAbort(pkt); a != nil {
			_, _ = m.ipc.WriteToIP(a, &net.IPAddr{IP: from.AsSlice()})
		}
	}
}

// reservePort claims an SCTP port number. A UDP socket bound to the same
// number keeps other processes using this transport off it, since raw
// sockets have no port of their own.
func reservePort(local netip.AddrPort) (*net.UDPConn, uint16, error) {
	uc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(local))
	if err != nil {
		return nil, 0, fmt.Errorf("transport raw: reserve port: %w", err)
	}
	return uc, uc.LocalAddr().(*net.UDPAddr).AddrPort().Port(), nil
}

// rawPath is one association's share of the raw socket.
type rawPath struct {
	inbox
	answered
	m       *rawMux
	key     rawKey
	onClose func()
}

func newRawPath(m *rawMux, key rawKey) *rawPath {
	p := &rawPath{m: m, key: key}
	p.init()
	return p
}

// deliver queues a packet for the association, answering a repeated COOKIE
// ECHO itself.
func (p *rawPath) deliver(pkt []byte) {
	if rest, ok := p.again(pkt); ok {
		_ = p.writePacket(p.ack)
		if rest != nil {
			p.push(withHeader(pkt, rest))
		}
		return
	}
	p.push(pkt)
}

func (p *rawPath) writePacket(b []byte) error {
	if err := p.closedErr(); err != nil {
		return err
	}
	_, err := p.m.ipc.WriteToIP(b, &net.IPAddr{IP: p.key.remote.AsSlice()})
	return err
}

func (p *rawPath) close() error {
	p.once.Do(func() {
		close(p.done)
		p.m.mu.Lock()
		if p.m.paths[p.key] == p {
			delete(p.m.paths, p.key)
		}
		p.m.mu.Unlock()
		if p.onClose != nil {
			p.onClose()
		}
	})
	return nil
}

func dialRaw(ctx context.Context, remote netip.AddrPort, o *options) (Conn, error) {
	local := o.local
	if !local.IsValid() {
		if remote.Addr().Is4() {
			local = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), 0)
			if !remote.Addr().IsLoopback() {
				local = netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
			}
		} else {
			local = netip.AddrPortFrom(netip.IPv6Loopback(), 0)
		}
	}
	if local.Addr().IsUnspecified() {
		return nil, errors.New("transport raw: give a local address with WithLocalAddr (the raw socket is bound to one address)")
	}
	m, err := acquireRawMux(local.Addr(), o)
	if err != nil {
		return nil, err
	}
	resv, port, err := reservePort(local)
	if err != nil {
		m.release()
		return nil, err
	}
	peerPort := pick(o.sctpPeerPort, remote.Port())
	key := rawKey{remote: remote.Addr(), remotePort: peerPort, localPort: port}
	p := newRawPath(m, key)
	p.onClose = func() {
		m.mu.Lock()
		delete(m.owned, port)
		m.mu.Unlock()
		_ = resv.Close()
		m.release()
	}
	m.mu.Lock()
	m.paths[key] = p
	m.owned[port] = true
	m.mu.Unlock()
	wire := newPionWire(p, netip.AddrPortFrom(local.Addr(), port), remote, port, peerPort, o.streams)
	c, err := newPionConn(ctx, KindRaw, wire, o)
	if err != nil {
		return nil, err // newPionConn closed the wire, which released the path
	}
	return c, nil
}

// rawListener accepts associations for one local SCTP port.
type rawListener struct {
	m       *rawMux
	o       *options
	g       *gate
	addr    netip.AddrPort
	resv    *net.UDPConn
	accepts chan Conn
	done    chan struct{}
	once    sync.Once
}

func listenRaw(local netip.AddrPort, o *options) (Listener, error) {
	if local.Addr().IsUnspecified() {
		return nil, errors.New("transport raw: listen on a specific address, not the wildcard")
	}
	m, err := acquireRawMux(local.Addr(), o)
	if err != nil {
		return nil, err
	}
	resv, port, err := reservePort(local)
	if err != nil {
		m.release()
		return nil, err
	}
	l := &rawListener{m: m, o: o, g: newGate(o), addr: netip.AddrPortFrom(local.Addr(), port), resv: resv,
		accepts: make(chan Conn, 16), done: make(chan struct{})}
	m.mu.Lock()
	m.listeners[port] = l
	m.owned[port] = true
	m.mu.Unlock()
	return l, nil
}

func (l *rawListener) stats() *ListenerStats { return &l.g.st }

// establish builds the association a verified COOKIE ECHO describes and
// queues it for Accept.
func (l *rawListener) establish(v verdict, echo []byte, key rawKey) {
	m := l.m
	to := &net.IPAddr{IP: key.remote.AsSlice()}
	if len(l.accepts) == cap(l.accepts) || !l.g.limit.take(key.remote) {
		l.g.st.OverLimit.Add(1)
		_, _ = m.ipc.WriteToIP(outOfResourceAbort(echo, v.est.peerTag), to)
		return
	}
	p := newRawPath(m, key)
	p.answered = newAnswered(v.est, echo)
	m.mu.Lock()
	if m.listeners[key.localPort] != l { // closed meanwhile
		m.mu.Unlock()
		l.g.limit.give(key.remote)
		return
	}
	m.paths[key] = p
	rawMuxMu.Lock()
	m.refs++ // the association keeps the socket open after the listener closes
	rawMuxMu.Unlock()
	p.onClose = func() { l.g.limit.give(key.remote); m.release() }
	m.mu.Unlock()
	wire := newPionWire(p, l.addr, netip.AddrPortFrom(key.remote, key.remotePort),
		l.addr.Port(), key.remotePort, l.o.streams)
	c, err := acceptedPionConn(KindRaw, wire, l.o, v.est)
	if err != nil {
		return // closing the wire released the path
	}
	l.g.st.Established.Add(1)
	_ = p.writePacket(p.ack)
	if v.rest != nil {
		p.push(withHeader(echo, v.rest))
	}
	select {
	case <-l.done:
		_ = c.Close()
		return
	default:
	}
	select {
	case l.accepts <- c:
	default:
		_ = c.Close()
	}
}

func (l *rawListener) Accept(ctx context.Context) (Conn, error) {
	select {
	case c := <-l.accepts:
		return c, nil
	case <-l.done:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *rawListener) Addr() netip.AddrPort { return l.addr }

// Released: the port reservation ends with Close.
func (l *rawListener) Released() <-chan struct{} { return l.done }

func (l *rawListener) Close() error {
	l.once.Do(func() {
		close(l.done)
		for len(l.accepts) > 0 {
			_ = (<-l.accepts).Close()
		}
		l.m.mu.Lock()
		delete(l.m.listeners, l.addr.Port())
		delete(l.m.owned, l.addr.Port())
		l.m.mu.Unlock()
		_ = l.resv.Close()
		l.m.release()
	})
	return nil
}
