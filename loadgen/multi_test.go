package loadgen

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/client/clienttest"
)

// A pair of fake gateways, g0 active and g1 standby. Mid-run g1 takes over
// (its alarm_cleared) and, once it carries calls, g0 turns standby without
// telling (a role change whose alarm is still on its way): the next call
// sent to g0 is refused 0x0120 and sent on to g1 (redirected), and from then
// on every call goes to g1. No call is refused or lost.
func TestLoadRedirectsOnAStandbyRefusal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g0, g1 := clienttest.New(false), clienttest.New(true)
	g0.Answer, g1.Answer = true, true
	addrs := []string{g0.Listen(t), g1.Listen(t)}
	switched := make(chan struct{})
	var once sync.Once
	out := &signalWriter{fire: func() {
		go once.Do(func() {
			defer close(switched)
			g1.SetStandby(false, true)
			for i := 0; g1.Calls() == 0; i++ {
				if i == 500 {
					t.Error("no call reached g1 after its takeover")
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
			g0.SetStandby(true, false)
		})
	}}
	called, _ := ParsePattern("4930XXXX")
	fin, err := Run(ctx, Options{Addresses: addrs, Conns: 1, Schedule: Constant(100, 3*time.Second), DPCs: []uint32{2}, Called: called,
		Out: out, JSON: true, Drain: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	<-switched
	t.Logf("final: offered %d completed %d redirected %d refused %v gateways %+v", fin.Offered, fin.Completed, fin.Redirected, fin.Refused, fin.Gateways)
	if fin.Gateways[0].StandbyNaks == 0 || fin.Redirected < fin.Gateways[0].StandbyNaks {
		t.Fatalf("g0's standby refusals %d, redirected %d: want each refusal sent on to g1", fin.Gateways[0].StandbyNaks, fin.Redirected)
	}
	if fin.Completed != fin.Offered || fin.RefusedTotal() != 0 || fin.Lost != 0 || fin.Unfinished != 0 {
		t.Fatalf("calls not all completed: %+v", fin)
	}
	if fin.Gateways[0].Completed == 0 || fin.Gateways[1].Completed == 0 || fin.Gateways[0].Completed+fin.Gateways[1].Completed != fin.Completed {
		t.Fatalf("shares %+v", fin.Gateways)
	}

	// Both standby: every call is refused because of standby, counted as such.
	g1.SetStandby(true, true)
	fin, err = Run(ctx, Options{Addresses: addrs, Conns: 1, Schedule: Constant(50, 400*time.Millisecond), DPCs: []uint32{2}, Called: called,
		Out: io.Discard, Quiet: true, Drain: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if fin.Offered == 0 || fin.Refused["standby"] != fin.Offered || fin.Admitted != 0 {
		t.Fatalf("both standby: offered %d refused %v admitted %d", fin.Offered, fin.Refused, fin.Admitted)
	}
}

// until polls cond (bounded); the fakes' counters have no event.
func until(t *testing.T, what string, cond func() bool) bool {
	for i := 0; !cond(); i++ {
		if i == 500 {
			t.Errorf("timed out: %s", what)
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// A double failover of a pair under load: g0, the active, stops (its
// connections end) and g1 takes over; the generator dials g0 again, which
// comes back as the standby; then g1 stops and g0 takes over: the calls go
// to g0 again. Calls in progress on a stopped gateway are counted lost or
// errors, none is left unfinished.
func TestLoadRedialsAndFollowsADoubleFailover(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g0, g1 := clienttest.New(false), clienttest.New(true)
	g0.Answer, g1.Answer = true, true
	addrs := []string{g0.Listen(t), g1.Listen(t)}
	var after int // g0's calls before the second takeover
	done := make(chan struct{})
	out := &signalWriter{fire: func() {
		go func() {
			defer close(done)
			g0.SetStandby(true, false) // it comes back as the standby
			g0.Drop()
			g1.SetStandby(false, true)
			if !until(t, "calls on g1", func() bool { return g1.Calls() > 0 }) ||
				!until(t, "g0 dialled again", func() bool { return g0.Connections() > 0 }) {
				return
			}
			after = g0.Calls()
			g1.SetStandby(true, false)
			g1.Drop()
			g0.SetStandby(false, true)
			until(t, "calls on g0 after the second takeover", func() bool { return g0.Calls() > after })
		}()
	}}
	called, _ := ParsePattern("4930XXXX")
	fin, err := Run(ctx, Options{Addresses: addrs, Conns: 1, Schedule: Constant(100, 4*time.Second), DPCs: []uint32{2}, Called: called,
		Out: out, JSON: true, Drain: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	t.Logf("final: offered %d completed %d lost %d errors %d refused %v gateways %+v", fin.Offered, fin.Completed, fin.Lost, fin.Errors, fin.Refused, fin.Gateways)
	if fin.Gateways[0].Reconnects == 0 {
		t.Fatalf("g0 not dialled again: %+v", fin.Gateways)
	}
	if fin.Unfinished != 0 || fin.Completed+fin.Failed+fin.RefusedTotal()+fin.Errors != fin.Offered || fin.Completed == 0 {
		t.Fatalf("calls unaccounted for: %+v", fin)
	}
}
