package m2pa

import (
	"bytes"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp/capture"
	"github.com/isupgw/isupgw/mtp/transport"
)

// TestTapWritesReadableCapture: a link's Tap into the capture writer gives
// a pcap whose SCTP DATA chunks (PPID 5) hold the M2PA messages as sent:
// the alignment and the MSUs, which another reader (gopacket) decodes.
func TestTapWritesReadableCapture(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m2pa.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := capture.NewWriter(f)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var tapErr error
	tap := func(out bool, local, remote netip.AddrPort, stream uint16, b []byte) {
		src, dst := local, remote
		if !out {
			return // each side writes what it sends
		}
		if err := w.WriteSCTP(time.Now(), src, dst, stream, PPID, b); err != nil {
			mu.Lock()
			tapErr = err
			mu.Unlock()
		}
	}
	srv, _ := New(Config{Name: "srv", Transport: transport.KindUDP, Listen: netip.MustParseAddrPort("127.0.0.1:0"), Timers: fastTimers(), Tap: tap})
	if err := srv.Open(); err != nil {
		t.Fatal(err)
	}
	cli, _ := New(Config{Name: "cli", Transport: transport.KindUDP, Dial: srv.Addr(), Timers: fastTimers(), Tap: tap})
	if err := cli.Open(); err != nil {
		t.Fatal(err)
	}
	us, uc := newChanUser(), newChanUser()
	srv.Start(us)
	cli.Start(uc)
	wait(t, us.ev, "server in service")
	wait(t, uc.ev, "client in service")
	msu := []byte{0x85, 2, 0x40, 0, 0, 1, 0, 1}
	if err := cli.Send(0, msu); err != nil {
		t.Fatal(err)
	}
	wait(t, us.msu, "MSU at the server")
	cli.Close()
	srv.Close()
	f.Close()
	mu.Lock()
	if tapErr != nil {
		t.Fatal(tapErr)
	}
	mu.Unlock()
	got := readM2PA(t, path)
	var states []State
	found := false
	for _, c := range got {
		if c.ppid != PPID {
			t.Fatalf("frame %d: PPID %d", c.frame, c.ppid)
		}
		m, err := Decode(c.b)
		if err != nil {
			t.Fatalf("frame %d: %v", c.frame, err)
		}
		if m.Type == TypeLinkStatus {
			states = append(states, m.State)
			if c.stream != streamStatus {
				t.Fatalf("frame %d: link status on stream %d", c.frame, c.stream)
			}
		}
		if bytes.Equal(m.Data, msu) {
			found = c.stream == streamData && m.FSN == 0
		}
	}
	if !found {
		t.Fatal("the MSU is not in the capture (with FSN 0 on stream 1)")
	}
	if !containsState(states, StateAlignment) || !containsState(states, StateProvingNormal) || !containsState(states, StateReady) {
		t.Fatalf("link status in the capture: %v", states)
	}
}

func containsState(ss []State, s State) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
