package transport

import (
	"context"
	"encoding/binary"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/pion/sctp"
)

// memPath is an in-memory packetPath; every packet written is recorded,
// and wrote is signalled.
type memPath struct {
	in    chan []byte
	peer  *memPath
	done  chan struct{}
	once  sync.Once
	wrote chan struct{}

	mu   sync.Mutex
	sent [][]byte
}

func memPaths() (a, b *memPath) {
	a = &memPath{in: make(chan []byte, 64), done: make(chan struct{}), wrote: make(chan struct{}, 1)}
	b = &memPath{in: make(chan []byte, 64), done: make(chan struct{}), wrote: make(chan struct{}, 1)}
	a.peer, b.peer = b, a
	return a, b
}

func (p *memPath) readPacket(b []byte) (int, error) {
	select {
	case pkt := <-p.in:
		return copy(b, pkt), nil
	case <-p.done:
		return 0, net.ErrClosed
	}
}

func (p *memPath) writePacket(b []byte) error {
	pkt := append([]byte(nil), b...)
	p.mu.Lock()
	p.sent = append(p.sent, pkt)
	p.mu.Unlock()
	select {
	case p.wrote <- struct{}{}:
	default:
	}
	select {
	case p.peer.in <- pkt:
	default:
	}
	return nil
}

func (p *memPath) close() error { p.once.Do(func() { close(p.done) }); return nil }

func (p *memPath) packets() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]byte(nil), p.sent...)
}

// kernelChunkCheck applies the chunk length checks Linux makes before its
// state functions run (net/sctp/inqueue.c sctp_inq_pop, sm_statefuns.c
// sctp_chunk_length_valid): every chunk, padded, ends inside the packet,
// and a HEARTBEAT holds at least its Heartbeat Info parameter header
// (sizeof(struct sctp_heartbeat_chunk) = 8, RFC 9260 §3.3.5). A failure is
// what Linux answers with "The following chunk had invalid length".
func kernelChunkCheck(p []byte) (typ byte, ok bool) {
	for off := sctpCommonHeaderLen; off < len(p); {
		if len(p)-off < 4 {
			return 0, false
		}
		typ := p[off]
		l := int(binary.BigEndian.Uint16(p[off+2:]))
		if l < 4 || off+((l+3)&^3) > len(p) {
			return typ, false
		}
		if typ == chunkHeartbeat && l < 8 {
			return typ, false
		}
		off += (l + 3) &^ 3
	}
	return 0, true
}

// TestPionHeartbeatIsComplete: pion v1.12.1 sends a HEARTBEAT whenever its
// probe timeout fires with nothing in flight (onPTOTimerLocked ->
// sendActiveHeartbeatLocked), which under call load is routine. Its
// chunkHeartbeat defines Marshal, not marshal, so the packet encoder uses
// the embedded chunkHeader's and the Heartbeat Info parameter is lost: a
// 4-byte HEARTBEAT, which a Linux peer aborts as a protocol violation
// ("invalid length"). What reaches the wire must be a HEARTBEAT the peer
// accepts and acknowledges.
func TestPionHeartbeatIsComplete(t *testing.T) {
	pa, pb := memPaths()
	local := loopback
	wa := newPionWire(pa, local, local, 1, 2, DefaultStreams)
	wb := newPionWire(pb, local, local, 2, 1, DefaultStreams)
	t.Cleanup(func() { _ = wa.Close(); _ = wb.Close() })

	srv := make(chan *sctp.Association, 1)
	go func() {
		a, err := sctp.ServerWithOptions(sctp.WithNetConn(wb), sctp.WithLoggerFactory(quietLogger{}))
		if err != nil {
			t.Error(err)
		}
		srv <- a
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := newPionConn(ctx, KindUDP, wa, buildOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	s := <-srv
	if s == nil {
		t.FailNow()
	}
	t.Cleanup(func() { _ = c.Close(); s.Abort("done") })

	c.assoc.ActiveHeartbeat()

	deadline := time.NewTimer(3 * time.Second)
	defer deadline.Stop()
	for {
		var hb, ack bool
		for _, p := range pa.packets() {
			if typ, ok := kernelChunkCheck(p); !ok {
				t.Fatalf("chunk type %d with invalid length sent: % x", typ, p)
			}
			hb = hb || firstChunkType(p) == chunkHeartbeat
		}
		for _, p := range pb.packets() {
			ack = ack || firstChunkType(p) == chunkHeartbeatAck
		}
		if hb && ack {
			return
		}
		select { // until either side writes again
		case <-pa.wrote:
		case <-pb.wrote:
		case <-deadline.C:
			t.Fatalf("HEARTBEAT sent %v, HEARTBEAT ACK back %v", hb, ack)
		}
	}
}

// TestCompleteHeartbeats: a bare HEARTBEAT bundled between other chunks
// gets a 12-byte Heartbeat Info carrying the send time; the chunks around
// it are kept byte for byte; a packet without one is returned as is.
func TestCompleteHeartbeats(t *testing.T) {
	hdr := []byte{0, 1, 0, 2, 1, 2, 3, 4, 0, 0, 0, 0}
	sack := []byte{3, 0, 0, 16, 0, 0, 0, 9, 0, 1, 0, 0, 0, 0, 0, 0}
	cookieAckChunk := []byte{chunkCookieAck, 0, 0, 4}
	in := append(append(append(append([]byte(nil), hdr...), sack...), chunkHeartbeat, 0, 0, 4), cookieAckChunk...)
	out := completeHeartbeats(in, 0x0102030405060708)
	want := append(append(append([]byte(nil), hdr...), sack...),
		chunkHeartbeat, 0, 0, 16, 0, 1, 0, 12, 1, 2, 3, 4, 5, 6, 7, 8)
	want = append(want, cookieAckChunk...)
	if string(out) != string(want) {
		t.Fatalf("got  % x\nwant % x", out, want)
	}
	if _, ok := kernelChunkCheck(out); !ok {
		t.Fatal("completed packet still fails the kernel's length checks")
	}
	plain := append(append([]byte(nil), hdr...), sack...)
	if got := completeHeartbeats(plain, 1); &got[0] != &plain[0] || len(got) != len(plain) {
		t.Fatal("packet without a bare HEARTBEAT was rewritten")
	}
}
