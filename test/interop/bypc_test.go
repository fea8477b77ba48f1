package interop

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/mtp/transport"
)

// Several gateways by point code behind osmo-stp (docs/deployment.md): A
// (PC 1), D (PC 5) and E (PC 6), each the one ASP of its own AS, each with
// its own circuit group to B (PC 2); osmo-stp routes by DPC. A host attached
// to all three spreads its calls to B over the ones available; B's circuit
// groups are one per gateway (each point-code pair its own CIC space).
//
// The spreading here is the test's own (round robin over the gateways whose
// connection is up and that did not refuse the destination), so that this
// test checks the gateways and osmo-stp apart from the client; the Go
// client's own spreading (host/client Multi: by the destinations each
// gateway serves, least loaded) is tested against in-process gateways in
// host/client (TestMultiSpreadsByPointCodeAndMovesALostGatewaysShare).

// spreader places each call on the next gateway that is up.
type spreader struct {
	gws  []*party
	mu   sync.Mutex
	next int
	down map[int]string // why a gateway is out of the rotation
}

func (s *spreader) pick() (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range s.gws {
		i := s.next % len(s.gws)
		s.next++
		if _, out := s.down[i]; out {
			continue
		}
		select {
		case <-s.gws[i].single.Done():
			s.down[i] = "connection lost"
			continue
		default:
		}
		return i, true
	}
	return -1, false
}

// spreadCall places one call through the next gateway; a refused outseize
// is tried on the next one, once per gateway, and a refusal for the
// destination (unavailable, out of service) or a closed connection takes
// that gateway out of the rotation.
func (s *spreader) spreadCall(dpc uint32, called string, hold time.Duration) (int, outcome) {
	var o outcome
	for range s.gws {
		i, ok := s.pick()
		if !ok {
			break
		}
		o = s.gws[i].call(dpc, called, hold)
		if o.refused == nil {
			return i, o
		}
		// Refused: try the next gateway; one that cannot reach the
		// destination, or is gone, leaves the rotation.
		if e := o.refused.Error(); strings.Contains(e, "destination") || errors.Is(o.refused, client.ErrClosed) {
			s.mu.Lock()
			s.down[i] = e
			s.mu.Unlock()
		}
	}
	if o.refused == nil && !o.completed {
		o.refused = fmt.Errorf("no gateway up")
	}
	return -1, o
}

// TestGatewaysByPointCode: 300 calls spread over A, D and E all complete,
// a third on each; then, under a steady spread load, D stops (SIGTERM: ASP
// Inactive, ASP Down): osmo-stp's DUNA for PC 5 tells B's host (alarm),
// the spreading host loses its connection to D, and the calls go on
// through A and E only.
func TestGatewaysByPointCode(t *testing.T) {
	l := needLab(t)
	// Registered first, run last: osmo-stp's view of the associations
	// after the gateways' own logs, the last thing a failure prints.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("osmo-stp:\n%s", grepLines(consoleTail(400), 20, "connection closed", "ASP_", "NOTIFY", "DUNA", "DAVA"))
		}
	})
	n := l.circuits(t)
	bin := isupgwBinary(t)
	t0 := time.Now()
	sides := []Side{l.A, l.D, l.E}
	var gws []*proc
	var hosts []*party
	for i, s := range sides {
		api, metrics := fmt.Sprintf("127.0.0.1:%d", 17711+i), fmt.Sprintf("127.0.0.1:%d", 19711+i)
		name := strings.ToUpper(groupName(s))
		gws = append(gws, startProc(t, bin, name, l.gatewayYAML(s, transport.KindRaw, gwOptions{HostAPI: api, Metrics: metrics}, l.B), api, metrics))
	}
	const apiB, metricsB = "127.0.0.1:17719", "127.0.0.1:19719"
	b := startProc(t, bin, "B", l.gatewayYAML(l.B, transport.KindRaw, gwOptions{HostAPI: apiB, Metrics: metricsB}, sides...), apiB, metricsB)
	for _, g := range gws {
		ready(t, g.name, g.status, groupName(l.B), n, 60*time.Second)
	}
	poll(t, 60*time.Second, "B: stp active, A, D and E available, all circuits idle", func() (bool, string) {
		st, err := b.status()
		if err != nil {
			return false, err.Error()
		}
		ok := len(st.Associations) == 1 && st.Associations[0].State == "active" && st.Circuits["idle"] == len(sides)*n && len(st.Destinations) == len(sides)
		for _, d := range st.Destinations {
			ok = ok && d.Available
		}
		return ok, fmt.Sprintf("%+v", st)
	})
	phase(t, "gateways A, D, E and B up", t0)

	for _, g := range gws {
		hosts = append(hosts, dialOne(t, "host-"+g.name, g.api))
	}
	hb := dialOne(t, "b-host", apiB)
	sp := &spreader{gws: hosts, down: map[int]string{}}

	// 300 calls spread over the three.
	t1 := time.Now()
	per := make([]int, len(gws))
	var mu sync.Mutex
	var bad []string
	why := map[string]int{} // the failures by outcome
	work := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				gw, o := sp.spreadCall(l.B.PC, fmt.Sprintf("4950%04d", i), 0)
				mu.Lock()
				if o.completed {
					per[gw]++
				} else {
					bad = append(bad, o.called+": "+o.String())
					why[o.String()]++
				}
				mu.Unlock()
			}
		}()
	}
	for i := range 300 {
		work <- i
	}
	close(work)
	wg.Wait()
	if len(bad) > 0 {
		t.Fatalf("%d of 300 calls failed (A %d, D %d, E %d completed); first: %s; why: %v", len(bad), per[0], per[1], per[2], bad[0], why)
	}
	for i, c := range per {
		if c != 100 {
			t.Errorf("gateway %s carried %d of the 300 calls, want 100 (round robin, all up)", gws[i].name, c)
		}
	}
	phase(t, "300 calls over A, D, E", t1)
	t.Logf("300 calls: A %d, D %d, E %d", per[0], per[1], per[2])

	// D stops under a steady load.
	type placed struct {
		gw    int
		start time.Time
		o     outcome
	}
	var (
		lmu     sync.Mutex
		results []placed
		lwg     sync.WaitGroup
	)
	stop := make(chan struct{})
	lwg.Add(1)
	go func() {
		defer lwg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for seq := 0; ; seq++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			lwg.Add(1)
			go func(called string) {
				defer lwg.Done()
				start := time.Now()
				gw, o := sp.spreadCall(l.B.PC, called, 300*time.Millisecond)
				lmu.Lock()
				results = append(results, placed{gw, start, o})
				lmu.Unlock()
			}(fmt.Sprintf("4951%04d", seq))
		}
	}()
	time.Sleep(2 * time.Second) // steady load before the stop (load, not synchronisation)
	tStop := time.Now()
	gws[1].stop()
	stopped := time.Since(tStop)
	hb.mustWaitAlarm(t, isDestAlarm(alarmUnavailable, l.D.PC, false), "B's host: alarm 0x17 for PC 5 (D gone)")
	select {
	case <-hosts[1].single.Done():
	case <-time.After(10 * time.Second):
		t.Errorf("the spreading host's connection to D still open 10 s after D stopped")
	}
	time.Sleep(3 * time.Second) // steady load after the stop
	close(stop)
	lwg.Wait()
	before, after := map[int]int{}, map[int]int{}
	var failed []string
	for _, r := range results {
		switch {
		case !r.o.completed:
			failed = append(failed, r.o.called+": "+r.o.String())
		case r.start.Before(tStop):
			before[r.gw]++
		default:
			after[r.gw]++
		}
	}
	t.Logf("FIGURES D stopped (SIGTERM, %v to exit): calls completed before by gateway %v, after %v (0 A, 1 D, 2 E); not completed %d: %v",
		stopped.Round(time.Millisecond), before, after, len(failed), failed)
	if after[0] == 0 || after[2] == 0 {
		t.Errorf("after D stopped, A and E should carry the calls: %v", after)
	}
	if len(failed) > 0 {
		t.Errorf("%d calls not completed around D's stop (a graceful stop drains its calls): %v", len(failed), failed)
	}
	// Calls started on D before its stop ended there; none started on D after
	// its connection closed (the spreader skips it).
	lmu.Lock()
	for _, r := range results {
		if r.gw == 1 && r.start.After(tStop.Add(stopped)) {
			t.Errorf("call %s placed on D after it stopped", r.o.called)
		}
	}
	lmu.Unlock()
	phase(t, "D stopped, load on A, E", tStop)
}

// mustWaitAlarm waits for an alarm event of a party that ok accepts.
func (p *party) mustWaitAlarm(t *testing.T, ok func(client.Event) bool, what string) {
	t.Helper()
	poll(t, 30*time.Second, what, func() (bool, string) {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, a := range p.alarms {
			if ok(a.a) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d alarms", len(p.alarms))
	})
}
