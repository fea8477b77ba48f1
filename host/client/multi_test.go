package client

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/client/clienttest"
	"github.com/isupgw/isupgw/host/wire"
)

func newFake(t *testing.T, standby bool, serves ...uint32) (*clienttest.Fake, net.Conn) {
	f := clienttest.New(standby, serves...)
	return f, f.Pipe(t)
}

// TestMultiFollowsTheActive: a host attached to both gateways of a pair sends
// each call to the one not in standby; on a takeover (the active one naks
// "standby", the other clears its standby alarm) new calls move and the call
// placed before stays on its gateway.
func TestMultiFollowsTheActive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g0, c0 := newFake(t, true) // standby listed first: the client must skip it
	g1, c1 := newFake(t, false)
	m, err := NewMulti(ctx, []net.Conn{c0, c1}, Config{App: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	first, err := m.Outseize(ctx, Outseize{DPC: 2, Called: "123"})
	if err != nil || first.Gateway != 1 {
		t.Fatalf("first call: %+v %v (want gateway 1)", first, err)
	}
	// Takeover: g1 becomes standby (it refuses before its alarm arrives),
	// g0 active.
	g1.SetStandby(true, false)
	g0.SetStandby(false, true)
	for ev := range m.Events() { // wait for the alarm_cleared to be seen
		if a, ok := ev.Event.(*Alarm); ok && a.Cleared && ev.Gateway == 0 {
			break
		}
	}
	second, err := m.Outseize(ctx, Outseize{DPC: 2, Called: "123"})
	if err != nil || second.Gateway != 0 {
		t.Fatalf("call after the takeover: %+v %v (want gateway 0)", second, err)
	}
	if m.Active() != 0 {
		t.Fatalf("active %d", m.Active())
	}
	if err := m.Release(ctx, first, 16, 0); err != nil { // the earlier call is still on gateway 1
		t.Fatal(err)
	}
	if n := g0.Calls(); n != 1 {
		t.Fatalf("gateway 0 carried %d calls, want 1", n)
	}
}

// TestMultiSendsByDestination: gateway 0 serves point codes 2 and 5, gateway
// 1 only 2 (learned from their circuit groups); calls to 5 go to gateway 0,
// calls to 2 to both in turn; an alarm 0x17 for 2 at gateway 1 sends its
// share to gateway 0 until it is cleared; a destination nobody serves is
// refused without a request.
func TestMultiSendsByDestination(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g0, c0 := newFake(t, false, 2, 5)
	g1, c1 := newFake(t, false, 2)
	m, err := NewMulti(ctx, []net.Conn{c0, c1}, Config{App: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	gwOf := func(dpc uint32) int {
		t.Helper()
		c, err := m.Outseize(ctx, Outseize{DPC: dpc, Called: "123"})
		if err != nil {
			t.Fatalf("outseize to %d: %v", dpc, err)
		}
		return c.Gateway
	}
	for range 3 {
		if g := gwOf(5); g != 0 {
			t.Fatalf("call to 5 on gateway %d", g)
		}
	}
	// Gateway 0 now carries 3 calls: the least loaded, 1, takes the next
	// three to 2, then they alternate.
	var got []int
	for range 5 {
		got = append(got, gwOf(2))
	}
	if fmt.Sprint(got) != "[1 1 1 0 1]" && fmt.Sprint(got) != "[1 1 1 1 0]" {
		t.Fatalf("calls to 2 went to %v", got)
	}
	waitAlarm := func(cleared bool) {
		t.Helper()
		for ge := range m.Events() {
			if a, ok := ge.Event.(*Alarm); ok && ge.Gateway == 1 && a.Number == wire.AlarmDestinationUnavailable && a.Cleared == cleared {
				return
			}
		}
	}
	g1.Send(`{"type":"alarm","number":23,"severity":3,"text":"destination unavailable","data":{"dpc":2}}`)
	waitAlarm(false)
	for range 4 {
		if g := gwOf(2); g != 0 {
			t.Fatalf("call to 2 on gateway %d, which reported it unavailable", g)
		}
	}
	g1.Send(`{"type":"alarm_cleared","number":23,"severity":3,"text":"destination available","data":{"dpc":2}}`)
	waitAlarm(true)
	if g := gwOf(2); g != 1 {
		t.Fatalf("call to 2 on gateway %d after the clear (gateway 1 is the least loaded)", g)
	}
	if _, err := m.Outseize(ctx, Outseize{DPC: 9, Called: "123"}); err != ErrNoActive {
		t.Fatalf("call to 9, served by neither: %v", err)
	}
	if n0 := g0.Calls(); n0 != 3+1+4 {
		t.Fatalf("gateway 0 carried %d calls", n0)
	}
}

// TestMultiRedialsALostGateway: the pair's active g0 stops (its connection
// ends) with a call up: the host gets GatewayLost and the call released
// (cause 41); g1 takes over; g0 restarted comes back as the standby (the
// Multi dials it again: GatewayBack, then its alarm 0x40) and new calls stay
// on g1. Then g1 stops and g0 takes over: calls go to g0 again.
func TestMultiRedialsALostGateway(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	g0, g1 := clienttest.New(false), clienttest.New(true)
	m, err := DialMulti(ctx, "tcp", []string{g0.Listen(t), g1.Listen(t)}, Config{App: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	gwOf := func() (Call, int) {
		t.Helper()
		c, err := m.Outseize(ctx, Outseize{DPC: 2, Called: "123"})
		if err != nil {
			t.Fatal(err)
		}
		return c, c.Gateway
	}
	// await reads events until each wanted one has come (any order).
	await := func(want ...func(GatewayEvent) bool) {
		t.Helper()
		for len(want) > 0 {
			var ge GatewayEvent
			select {
			case ge = <-m.Events():
			case <-ctx.Done():
				t.Fatalf("timed out, %d events not seen", len(want))
			}
			for k, w := range want {
				if w(ge) {
					want = append(want[:k], want[k+1:]...)
					break
				}
			}
		}
	}
	lost := func(gw int) func(GatewayEvent) bool {
		return func(ge GatewayEvent) bool { _, ok := ge.Event.(*GatewayLost); return ok && ge.Gateway == gw }
	}
	back := func(gw int) func(GatewayEvent) bool {
		return func(ge GatewayEvent) bool { _, ok := ge.Event.(*GatewayBack); return ok && ge.Gateway == gw }
	}
	standby := func(gw int, v bool) func(GatewayEvent) bool {
		return func(ge GatewayEvent) bool {
			a, ok := ge.Event.(*Alarm)
			return ok && ge.Gateway == gw && a.Number == wire.AlarmStandby && a.Cleared == !v
		}
	}
	await(standby(1, true))
	first, gw := gwOf()
	if gw != 0 {
		t.Fatalf("first call on gateway %d", gw)
	}
	g0.SetStandby(true, false) // it will come back as the standby
	g0.Drop()
	g1.SetStandby(false, true)
	await(lost(0), standby(1, false), back(0), standby(0, true), func(ge GatewayEvent) bool {
		r, ok := ge.Event.(*Released)
		return ok && ge.Gateway == 0 && r.Call == first.Call && r.Cause == CauseGatewayLost
	})
	for range 3 {
		if _, gw := gwOf(); gw != 1 {
			t.Fatalf("call on gateway %d while 0 is back as the standby", gw)
		}
	}
	g1.SetStandby(true, false)
	g1.Drop()
	g0.SetStandby(false, true)
	await(lost(1), standby(0, false))
	if _, gw := gwOf(); gw != 0 {
		t.Fatalf("call on gateway %d after the second takeover", gw)
	}
}
