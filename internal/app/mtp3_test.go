package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/host/wire"
)

const yamlM2PA = `point_code: %d
mtp3:
  transport: udp
  emergency_alignment: true
  linksets:
    - name: peer
      adjacent: %d
      links:
        - {slc: 0, type: m2pa, %s: "127.0.0.1:%d"}
        - {slc: 1, type: m2pa, %s: "127.0.0.1:%d"}
circuit_groups: [{name: peer, point_code: %d, cics: ["1-8"]}]
timers: {t22: 300ms}
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
`

// TestTwoGatewaysOverM2PA runs two gateways whose only way to each other is
// their own MTP3 over two M2PA links (SCTP over UDP, loopback): the links
// align and pass the test, the destination resumes, calls go through, and
// `isupgw status` shows the links.
func TestTwoGatewaysOverM2PA(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p0, p1 := freeUDPPort(t), freeUDPPort(t)
	a := start(t, ctx, fmt.Sprintf(yamlM2PA, 1, 2, "listen", p0, "listen", p1, 2))
	b := start(t, ctx, fmt.Sprintf(yamlM2PA, 2, 1, "connect", p0, "connect", p1, 1))
	for _, p := range []*proc{a, b} {
		eventually(t, "links available, destination available, circuits reset", func() bool {
			st := p.run.Gateway.Status()
			if len(st.Links) != 2 || len(st.Destinations) != 1 || !st.Destinations[0].Available || st.Circuits["idle"] != 8 {
				return false
			}
			for _, l := range st.Links {
				if l.State != "available" || l.SLTPassed == 0 {
					return false
				}
			}
			return true
		})
	}
	hostA, hostB := dial(t, a, false), dial(t, b, true)
	var wg sync.WaitGroup
	answerCtx, stopAnswer := context.WithCancel(ctx)
	wg.Add(1)
	go func() { defer wg.Done(); answerAll(answerCtx, hostB) }()
	defer func() { stopAnswer(); wg.Wait() }()
	for range 5 {
		id := call(t, hostA)
		if err := hostA.Release(context.Background(), id, 16, 1); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "B idle after the calls", func() bool { return b.run.Gateway.Status().Circuits["idle"] == 8 })
	out := runStatus(t, a.run.MetricsAddr.String())
	for _, want := range []string{"LINKSET", "peer/0", "peer/1", "available"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	resp, err := http.Get("http://" + a.run.MetricsAddr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`isupgw_mtp3_link_available{link="peer/0",linkset="peer"} 1`, `isupgw_mtp3_link_tests_total{link="peer/1",linkset="peer",result="passed"}`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// B stops: A's linkset is lost, and its hosts hear of it.
	b.sigs <- syscall.SIGTERM
	select {
	case err := <-b.err:
		if err != nil {
			t.Fatalf("B stopped with %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("B did not stop")
	}
	alarmed := time.After(15 * time.Second)
	for done := false; !done; {
		select {
		case e := <-hostA.Events():
			if al, ok := e.(*client.Alarm); ok && al.Number == AlarmLinkset && !al.Cleared && al.Data["linkset"] == "peer" {
				done = true
			}
		case <-alarmed:
			t.Fatal("no linkset alarm at A's host after B stopped")
		}
	}
	var msuOut, msuIn uint64
	for _, l := range a.run.Gateway.Status().Links {
		msuOut, msuIn = msuOut+l.MSUsOut, msuIn+l.MSUsIn
	}
	// Per call IAM and REL go out, ACM, ANM and RLC come in.
	if msuOut < 5*2 || msuIn < 5*3 {
		t.Fatalf("A's links carried %d MSUs out and %d in for 5 calls", msuOut, msuIn)
	}
}

// userCounts is what a node's MTP3 counters say of the user traffic: the
// MSUs its links took from the user part for the first time (resent
// retrieved ones taken off) and the MSUs in that were neither management
// nor link test answers; tests is the link tests it ran (each an SLTM the
// peer received).
type userCounts struct{ out, in, tests int64 }

func countsOf(p *proc) userCounts {
	var c userCounts
	for _, l := range p.run.mtp3.node.Status() {
		for _, k := range l.Links {
			c.out += int64(k.MSUsOut) - int64(k.Retrieved)
			c.in += int64(k.MSUsIn) - int64(k.SLTPassed) - int64(k.SLTFailed)
			c.tests += int64(k.SLTPassed) + int64(k.SLTFailed)
		}
	}
	c.in -= int64(p.run.mtp3.node.Stats().SNMIn.Load())
	return c
}

// TestM2PAFaultsBetweenGateways: at least 1000 calls each way flow between A and B
// on two M2PA links of one linkset while link 1's association is aborted
// (changeover, Q.704 §5) and comes back (changeback, Q.704 §6); every call
// completes and the MTP3 counters show each side's ISUP messages sent once
// and received once (nothing lost, nothing resent by ISUP, nothing dropped
// from a hold, Q.704 §5.1's "without loss, duplication or mis-sequencing").
// With both links held down the destination pauses, the hosts get the
// linkset alarm and an outseize is refused with destination unavailable
// (0x0102); one link back resumes it and clears the alarm.
func TestM2PAFaultsBetweenGateways(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p0, p1 := freeUDPPort(t), freeUDPPort(t)
	y := strings.ReplaceAll(yamlM2PA, `cics: ["1-8"]`, `cics: ["1-64"]`)
	a := start(t, ctx, fmt.Sprintf(y, 1, 2, "listen", p0, "listen", p1, 2))
	b := start(t, ctx, fmt.Sprintf(y, 2, 1, "connect", p0, "connect", p1, 1))
	ready := func(p *proc) func() bool {
		return func() bool {
			st := p.run.Gateway.Status()
			if len(st.Destinations) != 1 || !st.Destinations[0].Available || st.Circuits["idle"] != 64 {
				return false
			}
			for _, l := range st.Links {
				if l.State != "available" || l.SLTPassed == 0 {
					return false
				}
			}
			return len(st.Links) == 2
		}
	}
	eventually(t, "A ready, links tested", ready(a))
	eventually(t, "B ready, links tested", ready(b))
	answerCtx, stopAnswer := context.WithCancel(ctx)
	defer stopAnswer()
	go answerAll(answerCtx, dial(t, a, true))
	go answerAll(answerCtx, dial(t, b, true))
	ca0, cb0 := countsOf(a), countsOf(b)
	// At least 1000 calls each way; the callers go on (bounded) until link 1
	// has changed back, so traffic always crosses the changeback however
	// fast the machine.
	const workers, calls = 6, 1000 // per side
	var done, failed, refused atomic.Int64
	var placed [2]atomic.Int64 // calls completed from A, from B
	var back atomic.Bool
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for i, side := range []struct {
		p   *proc
		dpc uint32
	}{{a, 2}, {b, 1}} {
		var next atomic.Int64
		for range workers {
			h := dial(t, side.p, false)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := next.Add(1); (n <= calls || !back.Load()) && n <= 20*calls; n = next.Add(1) {
					_, err := callVia(ctx, h, side.dpc)
					var nak *client.Nak
					switch {
					case errors.As(err, &nak) && nak.Status == wire.StatusOutboundCongestion:
						// Refused before any IAM: the adaptive admission may
						// limit calls while the changeover buffers (set-up
						// slows); nothing was sent, so nothing can be lost.
						// The host backs off a little, as the CSP asks.
						refused.Add(1)
						time.Sleep(5 * time.Millisecond)
						continue
					case err != nil:
						failed.Add(1)
						firstErr.CompareAndSwap(nil, err)
					}
					placed[i].Add(1)
					done.Add(1)
				}
			}()
		}
	}
	eventually(t, "a quarter of the calls", func() bool { return done.Load() >= 2*calls/4 })
	a.run.mtp3.m2pa[1].Abort()
	atAbort := done.Load()
	eventually(t, "link 1 changed over and back", func() bool {
		l := a.run.Gateway.Status().Links[1]
		return l.Changeovers > 0 && l.State == "available" && l.Changebacks > 0
	})
	atBack := done.Load()
	back.Store(true)
	wg.Wait()
	nA, nB := placed[0].Load(), placed[1].Load()
	if f := failed.Load(); f != 0 {
		t.Fatalf("%d of %d calls failed across the changeover and changeback; first: %v", f, nA+nB, firstErr.Load())
	}
	if r := refused.Load(); r > 0 {
		t.Logf("%d outseizes refused 0x000C (before any IAM) while the changeover buffered", r)
	}
	if nA < calls || nB < calls {
		t.Fatalf("%d calls from A and %d from B, want at least %d each", nA, nB, calls)
	}
	eventually(t, "every circuit idle", func() bool {
		return a.run.Gateway.Status().Circuits["idle"] == 64 && b.run.Gateway.Status().Circuits["idle"] == 64
	})
	st := a.run.Gateway.Status()
	t.Logf("calls done: %d at the abort, %d at the changeback, of %d (%d from A); A link 0 %+v; link 1 %+v; A node %+v; B node %+v", atAbort, atBack, nA+nB, nA,
		st.Links[0], st.Links[1], a.run.mtp3.node.Status(), b.run.mtp3.node.Status())
	// Per call 5 ISUP messages (IAM, ACM, ANM, REL, RLC): the originating
	// side sends 2 and receives 3, the terminating side the other way.
	// The restored link is tested again: the SLTMs the peer sent come in
	// as well.
	ca, cb := countsOf(a), countsOf(b)
	for _, c := range []struct {
		name              string
		p                 *proc
		before, now, peer userCounts
		peerBefore        userCounts
		own, other        int64 // calls it originated, calls it terminated
	}{{"A", a, ca0, ca, cb, cb0, nA, nB}, {"B", b, cb0, cb, ca, ca0, nB, nA}} {
		sltm := c.peer.tests - c.peerBefore.tests
		wantOut, wantIn := 2*c.own+3*c.other, 3*c.own+2*c.other
		if out, in := c.now.out-c.before.out, c.now.in-c.before.in-sltm; out != wantOut || in != wantIn {
			t.Errorf("%s's MTP3 carried %d user MSUs out and %d in for %d calls out and %d in, want %d and %d", c.name, out, in, c.own, c.other, wantOut, wantIn)
		}
		ns := c.p.run.mtp3.node.Stats()
		if d, x := ns.HeldDropped.Load(), ns.Discarded.Load(); d != 0 || x != 0 {
			t.Errorf("%s's MTP3 dropped %d held MSUs and discarded %d received ones", c.name, d, x)
		}
	}
	if st.Links[0].MSUsOut == 0 || st.Links[1].Changeovers == 0 {
		t.Fatal("link 0 never carried link 1's traffic")
	}

	// Both links down.
	alarms := dial(t, a, false)
	for _, l := range b.run.mtp3.m2pa {
		l.Hold(true)
	}
	eventually(t, "A pauses B", func() bool { return !a.run.Gateway.Status().Destinations[0].Available })
	waitAlarm(t, alarms, false)
	h := dial(t, a, false)
	_, err := h.Outseize(ctx, client.Outseize{DPC: 2, Called: "4930123456"})
	var nak *client.Nak
	if !errors.As(err, &nak) || nak.Status != 0x0102 {
		t.Fatalf("outseize with the linkset down: %v (want nak 0x0102 destination unavailable)", err)
	}
	b.run.mtp3.m2pa[1].Hold(false)
	eventually(t, "A resumes B on one link", func() bool { return a.run.Gateway.Status().Destinations[0].Available })
	waitAlarm(t, alarms, true)
	if !oneCall(ctx, h) {
		t.Fatal("a call after the resume failed")
	}
}

// waitAlarm waits (bounded) for the linkset alarm on "peer", raised or
// cleared, among c's events.
func waitAlarm(t *testing.T, c *client.Client, cleared bool) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case e := <-c.Events():
			if al, ok := e.(*client.Alarm); ok && al.Number == AlarmLinkset && al.Cleared == cleared && al.Data["linkset"] == "peer" {
				return
			}
		case <-deadline:
			t.Fatalf("no linkset alarm (cleared %v) at the host", cleared)
		}
	}
}
