package transport

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// packetPath moves whole SCTP packets between one association and the wire
// (a connected UDP socket, a listener's demultiplexer, or a raw IP socket).
type packetPath interface {
	readPacket(b []byte) (int, error)
	writePacket(b []byte) error
	close() error
}

// pionWire is the net.Conn pion/sctp runs on. It translates between pion's
// fixed port 5000 and the association's real SCTP ports, strips INIT address
// parameters pion would refuse, learns the peer's inbound stream limit, and
// drops packets with a wrong verification tag (vtag.go).
type pionWire struct {
	path                packetPath
	localPort, peerPort uint16
	local, remote       netip.AddrPort
	streams             uint16

	peerMIS atomic.Uint32 // peer's inbound streams from its INIT or INIT ACK
	badCRC  atomic.Uint64 // packets dropped for a wrong CRC32c
	badTag  atomic.Uint64 // packets dropped for a wrong verification tag
	tags    tagCheck

	wmu  sync.Mutex
	wbuf []byte
}

func newPionWire(path packetPath, local, remote netip.AddrPort, localPort, peerPort, streams uint16) *pionWire {
	return &pionWire{
		path: path, local: local, remote: remote,
		localPort: localPort, peerPort: peerPort, streams: streams,
		wbuf: make([]byte, 0, 1<<16),
	}
}

func (w *pionWire) Read(b []byte) (int, error) {
	for {
		n, err := w.path.readPacket(b)
		if err != nil {
			return 0, err
		}
		p := b[:n]
		if n < sctpCommonHeaderLen || !checksumOK(p) {
			w.badCRC.Add(1)
			continue
		}
		if !w.tags.inbound(p) {
			w.badTag.Add(1)
			continue
		}
		if _, mis, ok := initStreams(p); ok {
			w.peerMIS.Store(uint32(mis))
			if p, err = stripInitAddresses(p); err != nil {
				continue
			}
		}
		setPorts(p, pionPort, pionPort)
		return len(p), nil
	}
}

func (w *pionWire) Write(b []byte) (int, error) {
	if len(b) < sctpCommonHeaderLen {
		return 0, errBadPacket
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	p := completeHeartbeats(append(w.wbuf[:0], b...), time.Now().UnixNano())
	w.tags.outbound(p)
	setInitStreams(p, w.streams, w.streams)
	setPorts(p, w.localPort, w.peerPort)
	if err := w.path.writePacket(p); err != nil {
		return 0, err
	}
	return len(b), nil
}

// outboundStreams is min(configured, peer's MIS), once the handshake is done.
func (w *pionWire) outboundStreams() uint16 {
	mis := uint16(w.peerMIS.Load())
	if mis == 0 || mis > w.streams {
		return w.streams
	}
	return mis
}

func (w *pionWire) Close() error                       { return w.path.close() }
func (w *pionWire) LocalAddr() net.Addr                { return net.UDPAddrFromAddrPort(w.local) }
func (w *pionWire) RemoteAddr() net.Addr               { return net.UDPAddrFromAddrPort(w.remote) }
func (w *pionWire) SetDeadline(t time.Time) error      { return nil }
func (w *pionWire) SetReadDeadline(t time.Time) error  { return nil }
func (w *pionWire) SetWriteDeadline(t time.Time) error { return nil }
