package m2pa

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp/internal/q703"
	"github.com/isupgw/isupgw/mtp/internal/q703/q703test"
	"github.com/isupgw/isupgw/mtp/mtp3/l2/l2test"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

const m2paCapture = "../../../shared/captures/m2pa_isup_itu.pcap"

// captured is one M2PA message found in a capture.
type captured struct {
	frame    int
	ts       time.Time
	src, dst netip.AddrPort
	stream   uint16
	ppid     uint32
	b        []byte
}

// readM2PA returns the M2PA messages (SCTP DATA chunks with PPID 5 or port
// 3565) of a pcap file, unfragmented chunks only. It skips the test when
// the file is absent.
func readM2PA(t *testing.T, path string) []captured {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("capture %s absent: the M2PA replay test needs it (see ../shared/captures/README.md)", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []captured
	for frame := 1; ; frame++ {
		data, ci, err := r.ReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := gopacket.NewPacket(data, r.LinkType(), gopacket.Default)
		var src, dst netip.Addr
		if ip, ok := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4); ok {
			src, _ = netip.AddrFromSlice(ip.SrcIP.To4())
			dst, _ = netip.AddrFromSlice(ip.DstIP.To4())
		} else if ip, ok := p.Layer(layers.LayerTypeIPv6).(*layers.IPv6); ok {
			src, _ = netip.AddrFromSlice(ip.SrcIP)
			dst, _ = netip.AddrFromSlice(ip.DstIP)
		}
		sc, ok := p.Layer(layers.LayerTypeSCTP).(*layers.SCTP)
		if !ok {
			continue
		}
		for _, l := range p.Layers() {
			d, ok := l.(*layers.SCTPData)
			if !ok || !d.BeginFragment || !d.EndFragment {
				continue
			}
			if d.PayloadProtocol != PPID && sc.SrcPort != Port && sc.DstPort != Port {
				continue
			}
			out = append(out, captured{frame: frame, ts: ci.Timestamp,
				src: netip.AddrPortFrom(src, uint16(sc.SrcPort)), dst: netip.AddrPortFrom(dst, uint16(sc.DstPort)),
				stream: d.StreamId, ppid: uint32(d.PayloadProtocol), b: append([]byte(nil), d.Payload...)})
		}
	}
	return out
}

// TestCaptureYateLinkAccepted replays one side of a capture between two
// instances of another SS7 stack (Yate): we take the place of the side on
// port 41225, receive what its peer on 3565 sent, when it sent it (fake
// clock), and send the MSUs our side sent. The link must align (emergency
// proving), accept the peer's empty User Data acknowledgements and its
// sequence numbers starting at 0xFFFFFF, deliver every MSU, and number our
// own MSUs exactly as the captured side did.
func TestCaptureYateLinkAccepted(t *testing.T) {
	ms := readM2PA(t, m2paCapture)
	if len(ms) < 100 {
		t.Fatalf("only %d M2PA messages in the capture", len(ms))
	}
	peer := ms[0].dst // the first message goes from 41225 to 3565
	if peer.Port() != Port {
		peer = ms[0].src
	}
	clock := l2test.New()
	t0 := ms[0].ts
	e := q703test.NewEnd(clock, suiteFraming, 0)
	e.M.Emergency(true)
	var peerMSUs, peerAcks, ours int
	started := false
	for _, c := range ms {
		clock.AdvanceTo(l2test.New().Now().Add(c.ts.Sub(t0)))
		msg, err := Decode(c.b)
		if err != nil {
			t.Fatalf("frame %d: %v", c.frame, err)
		}
		if c.src == peer {
			if msg.Type == TypeUserData {
				if msg.Data == nil {
					peerAcks++
				} else {
					if peerMSUs == 0 && msg.FSN != 0 {
						t.Fatalf("frame %d: peer's first MSU has FSN %d", c.frame, msg.FSN)
					}
					peerMSUs++
				}
			}
			if msg.Type == TypeLinkStatus && peerMSUs == 0 && (msg.FSN != SeqInitial || msg.BSN != SeqInitial) {
				t.Fatalf("frame %d: %v with FSN %d BSN %d before any MSU", c.frame, msg.State, msg.FSN, msg.BSN)
			}
			e.Receive(c.b)
			if st := e.State(); started && st == q703.StOutOfService {
				t.Fatalf("frame %d (%v): link failed: %q", c.frame, msg.State, e.U.Last())
			}
			continue
		}
		// Our side's message in the capture.
		switch {
		case msg.Type == TypeLinkStatus && msg.State == StateAlignment && !started:
			e.M.Start(e.U)
			started = true
		case msg.Type == TypeUserData && msg.Data != nil:
			if st := e.State(); st != q703.StInService {
				t.Fatalf("frame %d: our side sent an MSU; our link is %v", c.frame, st)
			}
			e.Take()
			if err := e.M.Send(msg.Priority, msg.Data); err != nil {
				t.Fatalf("frame %d: %v", c.frame, err)
			}
			out := e.Take()
			got, _ := Decode(out[len(out)-1])
			if got.FSN != msg.FSN || !bytes.Equal(got.Data, msg.Data) {
				t.Fatalf("frame %d: we sent FSN %d, the capture FSN %d", c.frame, got.FSN, msg.FSN)
			}
			// Our BSN is never behind what the captured side had seen.
			if seqDist(msg.BSN, got.BSN) > 64 {
				t.Fatalf("frame %d: our BSN %d, captured %d", c.frame, got.BSN, msg.BSN)
			}
			ours++
		}
	}
	if e.State() != q703.StInService {
		t.Fatalf("link %v at the end: %q", e.State(), e.U.Last())
	}
	if got := len(e.U.ReceivedMSUs()); got != peerMSUs || peerMSUs < 40 {
		t.Fatalf("delivered %d MSUs, the peer sent %d", got, peerMSUs)
	}
	if peerAcks == 0 {
		t.Fatal("the capture has no empty User Data acknowledgements: wrong file?")
	}
	if stats(e).Malformed.Load() != 0 || stats(e).Discarded.Load() != 0 || stats(e).Failures.Load() != 0 {
		t.Fatalf("malformed %d discarded %d failures %d", stats(e).Malformed.Load(), stats(e).Discarded.Load(), stats(e).Failures.Load())
	}
	if n := e.M.Snapshot().Unacked; n > 8 {
		t.Fatalf("%d of our MSUs never acknowledged by the peer", n)
	}
	t.Logf("aligned; %d MSUs and %d empty acknowledgements received, %d sent", peerMSUs, peerAcks, ours)
}
