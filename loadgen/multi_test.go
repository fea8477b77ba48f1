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
