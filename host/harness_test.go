package host_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/isupgw/isupgw/gateway"
	"github.com/isupgw/isupgw/host"
	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/mtp/transport"
	"github.com/isupgw/isupgw/sprc"
)

const token = "s3cret"

var lo = netip.MustParseAddr("127.0.0.1")

// node is a running gateway with a host server attached, listening on TCP
// (loopback, ephemeral port) and on a Unix socket.
type node struct {
	g      *gateway.Gateway
	srv    *host.Server
	tcp    string
	unix   string
	pc     mtp.PointCode
	idle   int // circuits when all are idle
	alarms chan stack.Alarm
}

type pairOpts struct {
	circuits     int         // per group (default 8)
	hostA, hostB host.Config // TCP, Unix and Token are filled in
	optsA        []host.Option
	optsB        []host.Option
	hooksA       *stack.Hooks
	controlA     *sprc.Config // congestion control on A (none if nil)
	slowA        func()       // runs before each item of A's loop (stack.WithSlowdown)
}

// startPair runs gateways A (PC 1) and B (PC 2) over M3UA (SCTP over UDP on
// loopback), as gateway_test.go does, each with a host server. A also has a
// group towards PC 3, which no association reaches.
func startPair(t testing.TB, o pairOpts) (a, b *node) {
	t.Helper()
	if o.circuits == 0 {
		o.circuits = 8
	}
	dir, err := os.MkdirTemp("", "hostapi")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		os.RemoveAll(dir)
	})
	mk := func(own, peer mtp.PointCode, m3 m3ua.Config, hc host.Config, hopts []host.Option, hooks *stack.Hooks, control *sprc.Config, slow func()) *node {
		groups := []stack.Group{{Name: "peer", DPC: peer, Variant: isup.ITU, CICs: []stack.CICRange{{First: 1, Last: uint16(o.circuits)}}}}
		idle := o.circuits
		if own == 1 {
			groups = append(groups, stack.Group{Name: "nowhere", DPC: 3, Variant: isup.ITU, CICs: []stack.CICRange{{First: 1, Last: 4}}})
			idle += 4
		}
		cfg := gateway.Config{
			Stack: stack.Config{OPC: own, NI: 2, ResetOnStart: true, Timers: stack.Timers{T22: 300 * time.Millisecond}, Groups: groups},
			M3UA:  m3,
		}
		hc.TCP = "127.0.0.1:0"
		hc.Unix = filepath.Join(dir, fmt.Sprintf("gw%d.sock", own))
		if !hc.NoAuth {
			hc.Token = token
		}
		srv, err := host.New(hc, hopts...)
		if err != nil {
			t.Fatal(err)
		}
		n := &node{srv: srv, unix: hc.Unix, pc: own, idle: idle, alarms: make(chan stack.Alarm, 1024)}
		sink := func(e stack.Event) {
			srv.Sink(e)
			if al, ok := e.(stack.Alarm); ok {
				select {
				case n.alarms <- al:
				default:
				}
			}
		}
		var gopts []gateway.Option
		gopts = append(gopts, gateway.WithM3UAOptions(m3ua.WithHeartbeat(time.Second, 3*time.Second)))
		if hooks != nil {
			gopts = append(gopts, gateway.WithStackOptions(stack.WithHooks(*hooks)))
		}
		if slow != nil {
			gopts = append(gopts, gateway.WithStackOptions(stack.WithSlowdown(slow)))
		}
		if control != nil {
			gopts = append(gopts, gateway.WithCongestionControl(*control, func(a sprc.Alarm) {
				srv.RaiseAlarm(host.Alarm{Number: a.Number, Severity: a.Severity, Cleared: a.Cleared, Text: a.Text, Data: a.Data})
			}, nil))
		}
		g, err := gateway.New(cfg, sink, gopts...)
		if err != nil {
			t.Fatal(err)
		}
		n.g = g
		srv.Attach(g.Stack)
		if err := srv.Start(ctx); err != nil {
			t.Fatal(err)
		}
		n.tcp = srv.TCPAddr().String()
		if err := g.Start(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := g.Wait(); err != nil {
				t.Errorf("gateway: %v", err)
			}
			srv.Wait()
		}()
		return n
	}
	a = mk(1, 2, m3ua.Config{Role: m3ua.RoleIPSP, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0),
		Peers: []m3ua.Peer{{Name: "b", From: lo, DPCs: []mtp.PointCode{2}}}}, o.hostA, o.optsA, o.hooksA, o.controlA, o.slowA)
	b = mk(2, 1, m3ua.Config{Role: m3ua.RoleIPSP, Transport: transport.KindUDP,
		Peers: []m3ua.Peer{{Name: "a", Dial: a.g.Endpoint.Addr(), DPCs: []mtp.PointCode{1}}}}, o.hostB, o.optsB, nil, nil, nil)
	for _, n := range []*node{a, b} {
		n.waitAlarm(t, func(al stack.Alarm) bool { return al.Kind == stack.AlarmDestinationUnavailable && al.Cleared })
	}
	for _, n := range []*node{a, b} {
		n.waitIdle(t)
	}
	return a, b
}

func (n *node) waitAlarm(t testing.TB, match func(stack.Alarm) bool) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case al := <-n.alarms:
			if match(al) {
				return
			}
		case <-timeout:
			t.Fatalf("gateway %d: alarm not seen within 10 s", n.pc)
		}
	}
}

// waitIdle waits until every circuit is idle and no call is left. The stack
// has no signal for that, so it polls Inspect, bounded.
func (n *node) waitIdle(t testing.TB) {
	t.Helper()
	var last stack.Snapshot
	for i := 0; i < 5000; i++ {
		snap, err := n.g.Stack.Inspect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if snap.CircuitsByState["idle"] == n.idle && snap.Calls == 0 {
			return
		}
		last = snap
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("gateway %d: circuits not idle: %v, calls %d", n.pc, last.CircuitsByState, last.Calls)
}

// hostConn is a test host: a client and the events it received.
type hostConn struct {
	*client.Client
	t testing.TB
}

func (n *node) dial(t testing.TB, network string, cfg client.Config) *hostConn {
	t.Helper()
	addr := n.tcp
	if network == "unix" {
		addr = n.unix
	}
	if cfg.Token == "" {
		cfg.Token = token
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, network, addr, cfg)
	if err != nil {
		t.Fatalf("dial %s %s: %v", network, addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &hostConn{Client: c, t: t}
}

func ctx10(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// next returns the next event, skipping alarms unless want is an alarm.
func next[T client.Event](h *hostConn) T {
	h.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e, ok := <-h.Events():
			if !ok {
				h.t.Fatalf("connection ended while waiting for %T: %v", *new(T), h.Err())
			}
			if v, ok := e.(T); ok {
				return v
			}
			if _, ok := e.(*client.Alarm); ok {
				continue
			}
			h.t.Fatalf("want %T, got %#v", *new(T), e)
		case <-timeout:
			h.t.Fatalf("no %T within 10 s", *new(T))
		}
	}
}

// answerer answers every incoming call (alert, then answer) until the
// connection ends; released events go to the returned channel.
func (h *hostConn) answerer() (released <-chan *client.Released) {
	ch := make(chan *client.Released, 1024)
	go func() {
		defer close(ch)
		for e := range h.Events() {
			switch x := e.(type) {
			case *client.Incoming:
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				if err := h.Alert(ctx, x.Call); err == nil {
					h.Answer(ctx, x.Call)
				}
				cancel()
			case *client.Released:
				ch <- x
			}
		}
	}()
	return ch
}

// call places a call from h and waits until it is answered.
func (h *hostConn) call(dpc uint32, called string) client.Seized {
	h.t.Helper()
	s, err := h.Outseize(ctx10(h.t), client.Outseize{DPC: dpc, Called: called, Calling: "4930999"})
	if err != nil {
		h.t.Fatalf("outseize: %v", err)
	}
	for {
		switch e := next[client.Event](h).(type) {
		case *client.Progress, *client.Alarm:
			continue
		case *client.Answered:
			if e.Call != s.Call {
				h.t.Fatalf("answered for call %d, want %d", e.Call, s.Call)
			}
			return s
		default:
			h.t.Fatalf("call %d: unexpected %#v", s.Call, e)
		}
	}
}
