package libss7

import (
	"strings"
	"testing"
	"time"
)

// TestPeerScaffold checks the scaffold isupgw's integration test will use:
// farend on one end of a socketpair, the other end as a net.Conn that
// carries one MTP2 signal unit per Read. farend's MTP2 starts alignment, so
// the first unit must be an LSSU SIO or SIOS (Q.703 11.1: LI 1, status 0 or
// 3), and closing the conn must make farend exit by itself.
func TestPeerScaffold(t *testing.T) {
	t.Parallel()
	bin := Build(t)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			f, conn := StartPeerConn(t, bin, Config{Variant: v.name, OPC: v.pcA, DPC: v.pcB, CICs: "1-8", Mode: []string{"answer"}})
			start, err := f.Log().Wait(5*time.Second, Msg("local", "START", -1))
			if err != nil {
				t.Fatal(err)
			}
			if start.Text != "" || start.Int("cic_last") != 8 {
				t.Errorf("START: %s", start.Line)
			}
			if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 512)
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatalf("reading the first signal unit: %v", err)
			}
			// BSN/BIB, FSN/FIB, LI, status, 2 FCS placeholder octets.
			if n != 6 || buf[2]&0x3f != 1 || (buf[3]&7 != 0 && buf[3]&7 != 3) {
				t.Fatalf("first signal unit % x, want an LSSU SIO or SIOS", buf[:n])
			}
			conn.Close()
			if err := f.Wait(5 * time.Second); err != nil {
				t.Fatalf("farend after the link closed: %v", err)
			}
			if _, err := f.Log().Wait(time.Second, Msg("local", "LINK_CLOSED", -1)); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestFarendStopsOnSIGTERM: SIGTERM ends farend cleanly (exit status 0,
// an EXIT line saying why) whatever state its link is in.
func TestFarendStopsOnSIGTERM(t *testing.T) {
	t.Parallel()
	bin := Build(t)
	f, _ := StartPeer(t, bin, Config{Variant: "itu", OPC: "1", DPC: "2", Mode: []string{"script", "-"}})
	if _, err := f.Log().Wait(5*time.Second, Msg("local", "START", -1)); err != nil {
		t.Fatal(err)
	}
	if err := f.Stop(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	exit, err := f.Log().Wait(time.Second, Msg("local", "EXIT", -1))
	if err != nil {
		t.Fatal(err)
	}
	if exit.Line == "" || !strings.Contains(exit.Line, `"reason":"signal"`) {
		t.Errorf("EXIT: %s", exit.Line)
	}
}
