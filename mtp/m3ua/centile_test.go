package m3ua

import (
	"errors"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/capture"
	"github.com/isupgw/isupgw/mtp/transport"
	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"
)

var capturesDir = filepath.Join("..", "..", "..", "shared", "captures")

// aspMessages returns the M3UA messages the ASP (192.168.250.1) sent in
// centile_m3ua.cap: a DAVA bundled with ASP Up in one SCTP packet, then
// DATA on stream 0.
func aspMessages(t *testing.T) []capture.Message {
	path := filepath.Join(capturesDir, "centile_m3ua.cap")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("capture not available (%v); it lives in ../shared/captures beside the repository", err)
	}
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []capture.Message
	asp := netip.MustParseAddr("192.168.250.1")
	for {
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var fe *capture.FrameError
			if errors.As(err, &fe) {
				continue
			}
			t.Fatal(err)
		}
		if m.Src.Addr() == asp && m.M3UA != nil {
			out = append(out, m)
		}
	}
	if len(out) < 3 || out[0].Class != classSSNM || out[0].Type != 2 || out[1].Class != classASPSM || out[1].Type != 1 {
		t.Fatalf("capture does not start with DAVA + ASP Up: %d messages", len(out))
	}
	return out
}

// TestCentileBundledDAVAWithASPUpAtSG replays the centile ASP against our SG
// listener: the stray DAVA (an ASP may not send it) gets ERR 0x06 but does
// not stop the ASP Up, which is acknowledged; the DATA on stream 0 gets ERR
// 0x09, the same code the capture's own SG answered; the association stays.
func TestCentileBundledDAVAWithASPUpAtSG(t *testing.T) {
	msgs := aspMessages(t)
	sg := openSG(t, Peer{Name: "centile", From: lo, ASPID: 0, HasASPID: true})
	p := dialRaw(t, sg.Addr())
	for _, m := range msgs[:2] {
		p.send(m.M3UA, m.Stream) // back to back: pion bundles them as the capture did
	}
	if got := errCode(t, p.next(classMGMT, 0)); got != ErrUnexpectedMessage {
		t.Fatalf("DAVA from ASP: ERR 0x%02x", got)
	}
	p.next(classASPSM, 4)
	ntfy, err := messages.ParseNotify(p.next(classMGMT, 1))
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := u32(ntfy.Status); st != 1<<16|asInactive {
		t.Fatalf("NTFY status %x", st)
	}
	for _, m := range msgs[2:] {
		p.send(m.M3UA, m.Stream)
		if m.Class == classTransfer && m.Stream == 0 {
			if got := errCode(t, p.next(classMGMT, 0)); got != ErrInvalidStream {
				t.Fatalf("DATA on stream 0: ERR 0x%02x", got)
			}
		}
	}
	p.send(marshal(messages.NewHeartbeat(params.NewHeartbeatData([]byte("alive")))), 0)
	p.next(classASPSM, 6)
}

// TestCentileBundledDAVAWithASPUpAtIPSP: an IPSP may receive DAVA, so the
// same bundle yields a Resume for point code 2000 and ASP Up Ack.
func TestCentileBundledDAVAWithASPUpAtIPSP(t *testing.T) {
	msgs := aspMessages(t)
	ipsp := start(t, Config{Role: RoleIPSP, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0),
		Peers: []Peer{{Name: "centile", From: lo}}})
	p := dialRaw(t, ipsp.Addr())
	for _, m := range msgs[:2] {
		p.send(m.M3UA, m.Stream)
	}
	p.next(classASPSM, 4)
	ev := waitEvent(t, ipsp, "resume 2000", isType[mtp.Resume]).(mtp.Resume)
	if ev.PC != 2000 || ev.Peer != "centile" {
		t.Fatalf("%v", ev)
	}
}
