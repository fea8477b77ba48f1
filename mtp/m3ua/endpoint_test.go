package m3ua

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/transport"
)

// TestASPAndSGDataBothWaysInOrder: an ASP and an SG listener come up to
// ACTIVE over a real association; 16 SLS x 300 messages each way arrive
// complete, with the full routing label, and in order per SLS.
func TestASPAndSGDataBothWaysInOrder(t *testing.T) {
	for _, kind := range kinds(t) {
		t.Run(kind.String(), func(t *testing.T) {
			sg, asp := sgAndASP(t, kind)
			const sls, n = 16, 300
			go sendSeq(t, asp, 2, 1, sls, n, nil)
			if got := collectSeq(t, sg, 2, 1, sls, n, false); got != sls*n {
				t.Fatalf("SG got %d", got)
			}
			go sendSeq(t, sg, 1, 2, sls, n, nil)
			if got := collectSeq(t, asp, 1, 2, sls, n, false); got != sls*n {
				t.Fatalf("ASP got %d", got)
			}
			if asp.Stats().DataOut.Load() != sls*n || sg.Stats().DataIn.Load() != sls*n {
				t.Fatalf("counters: asp out %d sg in %d", asp.Stats().DataOut.Load(), sg.Stats().DataIn.Load())
			}
			if snap := sg.Stats().Snapshot(); snap["rx_class1_type1"] != sls*n || snap["tx_class1_type1"] != sls*n ||
				snap["rx_class3_type1"] != 1 || snap["tx_class3_type4"] != 1 || snap["state_changes"] == 0 {
				t.Fatalf("SG snapshot %v", snap)
			}
			// ASP Up, ASP Active and DAUD went out once each (no T(ack) expiry).
			if asp.Stats().Sent(classASPSM, 1) != 1 || asp.Stats().Sent(classASPTM, 1) != 1 || asp.Stats().Sent(classSSNM, 3) != 1 {
				t.Fatalf("asp sent %v", asp.Stats().Snapshot())
			}
			// The DAUD was answered with DAVA for the audited point code.
			waitEvent(t, asp, "DAVA for 1", func(ev mtp.Event) bool {
				r, ok := ev.(mtp.Resume)
				return ok && r.PC == 1
			})
		})
	}
}

// TestIPSP: single exchange (only the dialler sends ASP Up/Active) and
// double exchange (both do) come up, and data flows both ways.
func TestIPSP(t *testing.T) {
	for _, kind := range kinds(t) {
		for _, de := range []bool{false, true} {
			name := map[bool]string{false: "single", true: "double"}[de]
			t.Run(kind.String()+"/"+name, func(t *testing.T) {
				a := start(t, Config{Role: RoleIPSP, Transport: kind, Listen: netip.AddrPortFrom(lo, 0), DoubleExchange: de,
					Peers: []Peer{{Name: "b", From: lo, DPCs: []mtp.PointCode{20}}}})
				b := start(t, Config{Role: RoleIPSP, Transport: kind, DoubleExchange: de,
					Peers: []Peer{{Name: "a", Dial: a.Addr(), DPCs: []mtp.PointCode{10}}}})
				waitState(t, a, "b", "active")
				waitState(t, b, "a", "active")
				go sendSeq(t, b, 20, 10, 4, 100, nil)
				collectSeq(t, a, 20, 10, 4, 100, false)
				go sendSeq(t, a, 10, 20, 4, 100, nil)
				collectSeq(t, b, 10, 20, 4, 100, false)
				upsFromA := a.Stats().Sent(classASPSM, 1)
				if (de && upsFromA != 1) || (!de && upsFromA != 0) {
					t.Fatalf("accepting IPSP sent %d ASP Up in %s exchange", upsFromA, name)
				}
			})
		}
	}
}

// TestConcurrentTransfer: eight goroutines call Transfer at once, each
// owning two SLS values; every SLS arrives complete and in order.
func TestConcurrentTransfer(t *testing.T) {
	sg, asp := sgAndASP(t, transport.KindUDP)
	const perSLS = 200
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; i < perSLS; i++ {
				for _, sls := range []int{g, g + 8} {
					m := &mtp.Message{Label: mtp.Label{OPC: 2, DPC: 1, SI: mtp.SIISUP, NI: 2, SLS: uint8(sls)},
						Payload: []byte{byte(sls), byte(i >> 8), byte(i), 0xAA, 0xBB}}
					if err := asp.Transfer(m); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	if got := collectSeq(t, sg, 2, 1, 16, perSLS, false); got != 16*perSLS {
		t.Fatalf("got %d", got)
	}
}

// TestReconnectAfterSocketKilled: the SG aborts the ASP's association; the
// ASP notices, reconnects with backoff, goes ACTIVE again and traffic
// resumes.
func TestReconnectAfterSocketKilled(t *testing.T) {
	for _, kind := range kinds(t) {
		t.Run(kind.String(), func(t *testing.T) {
			sg, asp := sgAndASP(t, kind)
			go sendSeq(t, asp, 2, 1, 4, 50, nil)
			collectSeq(t, sg, 2, 1, 4, 50, false)

			sg.Peer("asp1").Abort()
			waitState(t, asp, "sg", "down")
			waitState(t, asp, "sg", "active")
			waitState(t, sg, "asp1", "active")
			if asp.Stats().Reconnects.Load() < 1 {
				t.Fatal("reconnect not counted")
			}
			go sendSeq(t, asp, 2, 1, 4, 50, nil)
			collectSeq(t, sg, 2, 1, 4, 50, false)
		})
	}
}

// TestLoadshareFailoverKeepsSLSOrder: an ASP reaches DPC 1 over two
// associations in loadshare. Half way through, one is aborted; every SLS
// keeps strictly increasing sequence numbers and its last message arrives.
// (Messages the ASP had not yet sent on the aborted association are lost;
// the changeover hold keeps the SG from seeing new ones before the old.)
func TestLoadshareFailoverKeepsSLSOrder(t *testing.T) {
	sg := start(t, Config{Role: RoleSG, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0),
		Peers: []Peer{
			{Name: "asp-a", From: lo, ASPID: 1, HasASPID: true},
			{Name: "asp-b", From: lo, ASPID: 2, HasASPID: true},
		}})
	asp := start(t, Config{Role: RoleASP, Transport: transport.KindUDP, RouteMode: mtp.Loadshare,
		Peers: []Peer{
			{Name: "sg-a", Dial: sg.Addr(), ASPID: 1, HasASPID: true, DPCs: []mtp.PointCode{1}},
			{Name: "sg-b", Dial: sg.Addr(), ASPID: 2, HasASPID: true, DPCs: []mtp.PointCode{1}},
		}}, WithBackoff(time.Hour, time.Hour)) // no reconnect: traffic must fail over
	waitState(t, asp, "sg-a", "active")
	waitState(t, asp, "sg-b", "active")
	const sls, n = 16, 400
	go sendSeq(t, asp, 2, 1, sls, n, func() { asp.Peer("sg-a").Abort() })
	collectSeq(t, sg, 2, 1, sls, n, true)
	if asp.Peer("sg-a").Available() || !asp.Peer("sg-b").Available() {
		t.Fatal("wrong availability after failover")
	}
	if asp.Table().Held.Load() == 0 {
		t.Fatal("no message was held for the changeover")
	}
}

// TestSSNMBecomeEvents: DUNA, DAVA, DRST, SCON with and without a level and
// DUPU sent by the SG arrive at the ASP as typed events with point code,
// level and cause; DUNA makes the destination unroutable until DAVA.
func TestSSNMBecomeEvents(t *testing.T) {
	sg, asp := sgAndASP(t, transport.KindUDP)
	waitEvent(t, asp, "audit answer", func(ev mtp.Event) bool { _, ok := ev.(mtp.Resume); return ok })
	send := func(ev mtp.Event) {
		if err := sg.Notify("asp1", ev); err != nil {
			t.Fatal(err)
		}
	}
	send(mtp.Pause{PC: 1})
	if ev := waitEvent(t, asp, "pause", isType[mtp.Pause]).(mtp.Pause); ev.PC != 1 || ev.Peer != "sg" {
		t.Fatalf("%v", ev)
	}
	err := asp.Transfer(&mtp.Message{Label: mtp.Label{OPC: 2, DPC: 1, SI: 5, SLS: 1}, Payload: []byte{1}})
	if !errors.Is(err, mtp.ErrUnavailable) {
		t.Fatalf("transfer to paused DPC: %v", err)
	}
	send(mtp.Resume{PC: 1})
	if ev := waitEvent(t, asp, "resume", isType[mtp.Resume]).(mtp.Resume); ev.PC != 1 {
		t.Fatalf("%v", ev)
	}
	if err := asp.Transfer(&mtp.Message{Label: mtp.Label{OPC: 2, DPC: 1, SI: 5, SLS: 1}, Payload: []byte{1}}); err != nil {
		t.Fatalf("transfer after resume: %v", err)
	}
	send(mtp.Restricted{PC: 0x3fff, Mask: 0})
	if ev := waitEvent(t, asp, "restricted", isType[mtp.Restricted]).(mtp.Restricted); ev.PC != 0x3fff {
		t.Fatalf("%v", ev)
	}
	send(mtp.Congestion{PC: 0x123456, Level: 2, LevelGiven: true})
	if ev := waitEvent(t, asp, "scon", isType[mtp.Congestion]).(mtp.Congestion); ev.PC != 0x123456 || ev.Level != 2 || !ev.LevelGiven {
		t.Fatalf("%v", ev)
	}
	send(mtp.Congestion{PC: 99})
	if ev := waitEvent(t, asp, "scon itu", isType[mtp.Congestion]).(mtp.Congestion); ev.PC != 99 || ev.Level != 1 || ev.LevelGiven {
		t.Fatalf("%v", ev)
	}
	send(mtp.UserPartUnavailable{PC: 1, User: mtp.SIISUP, Cause: mtp.UPUInaccessibleRemote})
	if ev := waitEvent(t, asp, "dupu", isType[mtp.UserPartUnavailable]).(mtp.UserPartUnavailable); ev.PC != 1 || ev.User != 5 || ev.Cause != mtp.UPUInaccessibleRemote {
		t.Fatalf("%v", ev)
	}
}

func isType[T mtp.Event](ev mtp.Event) bool { _, ok := ev.(T); return ok }

// TestGracefulStop: closing the ASP sends ASP Inactive and ASP Down and
// the SG sees the ASP go inactive and down without an error.
func TestGracefulStop(t *testing.T) {
	sg, asp := sgAndASP(t, transport.KindUDP)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := asp.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitState(t, sg, "asp1", "inactive")
	waitState(t, sg, "asp1", "down")
	if sg.Stats().Received(classASPTM, 2) != 1 || sg.Stats().Received(classASPSM, 2) != 1 {
		t.Fatalf("SG received %v", sg.Stats().Snapshot())
	}
	if asp.Stats().Sent(classASPSM, 2) != 1 {
		t.Fatal("ASP Down not sent")
	}
}

// TestReconnectAfterSGRestart: the SG process goes away and a new one
// starts on the same address; the ASP sees the loss, keeps dialling with
// backoff, comes back ACTIVE with the new SG and traffic resumes.
func TestReconnectAfterSGRestart(t *testing.T) {
	sg, asp := sgAndASP(t, transport.KindUDP)
	addr := sg.Addr()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := sg.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitState(t, asp, "sg", "down")
	sg2 := start(t, Config{Role: RoleSG, Transport: transport.KindUDP, Listen: addr,
		Peers: []Peer{{Name: "asp1", From: lo, ASPID: 7, HasASPID: true, RoutingContexts: []uint32{100}, DPCs: []mtp.PointCode{2}}}})
	waitState(t, asp, "sg", "active")
	waitState(t, sg2, "asp1", "active")
	go sendSeq(t, asp, 2, 1, 4, 50, nil)
	collectSeq(t, sg2, 2, 1, 4, 50, false)
}
