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

// TestM2PAFaultsBetweenGateways: calls flow from A to B while one M2PA
// link's association is aborted (changeover) and comes back (changeback),
// and none fails; with both links held down the destination pauses and an
// outseize is refused with destination unavailable; one link back resumes
// it.
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
				if l.State != "available" {
					return false
				}
			}
			return true
		}
	}
	eventually(t, "A ready", ready(a))
	eventually(t, "B ready", ready(b))
	hostB := dial(t, b, true)
	answerCtx, stopAnswer := context.WithCancel(ctx)
	defer stopAnswer()
	go answerAll(answerCtx, hostB)
	const workers, calls = 8, 400
	var next, done, failed atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		h := dial(t, a, false)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= calls {
				if !oneCall(ctx, h) {
					failed.Add(1)
				}
				done.Add(1)
			}
		}()
	}
	eventually(t, "a quarter of the calls", func() bool { return done.Load() >= calls/4 })
	// A controls the odd CICs (the lower point code), whose SLS (CIC & 15)
	// is odd: link 1 carries the calls. Its association goes.
	a.run.mtp3.m2pa[1].Abort()
	atAbort := done.Load()
	eventually(t, "link 1 changed over and back", func() bool {
		l := a.run.Gateway.Status().Links[1]
		return l.Changeovers > 0 && l.State == "available" && l.Changebacks > 0
	})
	wg.Wait()
	if f := failed.Load(); f != 0 {
		t.Fatalf("%d of %d calls failed across the changeover and changeback", f, calls)
	}
	st := a.run.Gateway.Status()
	t.Logf("%d of %d calls done when link 1's association was aborted; link 0: %+v; link 1: %+v", atAbort, calls, st.Links[0], st.Links[1])
	if st.Links[0].MSUsOut == 0 {
		t.Fatal("link 0 never carried the calls of link 1 during the changeover")
	}
	// Both links down.
	for _, l := range b.run.mtp3.m2pa {
		l.Hold(true)
	}
	eventually(t, "A pauses B", func() bool { return !a.run.Gateway.Status().Destinations[0].Available })
	h := dial(t, a, false)
	_, err := h.Outseize(ctx, client.Outseize{DPC: 2, Called: "4930123456"})
	var nak *client.Nak
	if !errors.As(err, &nak) || nak.Status != 0x0102 {
		t.Fatalf("outseize with the linkset down: %v (want nak 0x0102 destination unavailable)", err)
	}
	b.run.mtp3.m2pa[1].Hold(false)
	eventually(t, "A resumes B on one link", func() bool { return a.run.Gateway.Status().Destinations[0].Available })
	if !oneCall(ctx, h) {
		t.Fatal("a call after the resume failed")
	}
}
