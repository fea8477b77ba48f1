package host_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host"
	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/host/wire"
)

// waitClosed reads from r until the gateway closes it; the read deadline
// only bounds a failing test.
func (r *rawConn) waitClosed() error {
	r.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, err := r.br.ReadString('\n'); err != nil {
			return err
		}
	}
}

// A connection that never says hello is closed when the hello timeout ends
// and counted; a host that said hello before is not affected by it.
func TestHelloTimeout(t *testing.T) {
	a, _ := startPair(t, pairOpts{hostA: host.Config{HelloTimeout: 300 * time.Millisecond}})
	h := a.dial(t, "tcp", client.Config{App: "early"})
	for _, network := range []string{"tcp", "unix"} {
		idle := a.raw(t, network, nil)
		if err := idle.waitClosed(); !errors.Is(err, io.EOF) {
			t.Fatalf("%s: idle connection: %v, want EOF (closed by the gateway)", network, err)
		}
	}
	// Half-way through a hello is no hello either.
	slow := a.raw(t, "tcp", nil)
	if _, err := io.WriteString(slow.nc, `{"type":"hello","seq":1,`); err != nil {
		t.Fatal(err)
	}
	if err := slow.waitClosed(); !errors.Is(err, io.EOF) {
		t.Fatalf("partial hello: %v, want EOF", err)
	}
	if n := a.srv.Metrics().Disconnects["hello timeout"]; n != 3 {
		t.Errorf("hello timeouts counted: %d, want 3", n)
	}
	// h said hello longer than the timeout ago: its deadline was lifted.
	if _, err := h.Status(ctx10(t)); err != nil {
		t.Fatalf("host that said hello: %v", err)
	}
}

// Connections that never say hello, many more than the pre-hello limit (and
// than the old limit on all connections), do not keep a host from connecting
// and placing a call: each newcomer closes the connection that has waited
// longest for its hello.
func TestIdleConnectionsDoNotLockOutHosts(t *testing.T) {
	const limit, idle = 8, 40
	a, b := startPair(t, pairOpts{hostA: host.Config{MaxHosts: 4, MaxPreHello: limit, HelloTimeout: time.Minute}})
	callee := b.dial(t, "unix", client.Config{Incoming: true})
	calleeRel := callee.answerer()
	var conns []*rawConn
	for i := range idle {
		network := "tcp"
		if i%2 == 1 {
			network = "unix"
		}
		r := a.raw(t, network, nil)
		// Its answer shows the gateway accepted it and still waits for a hello.
		if m := r.roundTrip(`{"type":"status","seq":1}`); m.Status != wire.StatusNotAuthenticated {
			t.Fatalf("idle connection %d: %+v", i, m)
		}
		conns = append(conns, r)
	}
	caller := a.dial(t, "tcp", client.Config{App: "real"})
	s := caller.call(2, "4930123456")
	if err := caller.Release(ctx10(t), s.Call, 0, 0); err != nil {
		t.Fatal(err)
	}
	if r := next[*client.Released](caller); r.Call != s.Call {
		t.Fatalf("released: %+v", r)
	}
	<-calleeRel
	// The oldest idle connections were closed, the newest are still open.
	if err := conns[0].waitClosed(); !errors.Is(err, io.EOF) {
		t.Errorf("oldest idle connection: %v, want EOF", err)
	}
	if m := conns[idle-1].roundTrip(`{"type":"status","seq":2}`); m.Status != wire.StatusNotAuthenticated {
		t.Errorf("newest idle connection: %+v", m)
	}
	// idle+1 connections waited for a hello with room for limit of them.
	if n := a.srv.Metrics().Disconnects["pre-hello limit"]; n != idle+1-limit {
		t.Errorf("closed by the pre-hello limit: %d, want %d", n, idle+1-limit)
	}
	a.waitIdle(t)
}

// heapInUse is the memory of live heap objects and goroutine stacks after a
// collection.
func heapInUse() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64()
}

// 256 connections that never say hello, with a 65536-line send queue per
// host, cost bounded memory: send queues hold only what is queued. Each
// connection is sent one nak (so its queue and writer have been used).
func TestIdleConnectionsMemory(t *testing.T) {
	const idle = 256
	a, _ := startPair(t, pairOpts{hostA: host.Config{QueueSize: 65536, MaxPreHello: idle, HelloTimeout: time.Minute}})
	before := heapInUse()
	var conns []net.Conn
	for i := range idle {
		nc, err := net.Dial("tcp", a.tcp)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		if _, err := io.WriteString(nc, `{"type":"status","seq":1}`+"\n"); err != nil {
			t.Fatal(err)
		}
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := bufio.NewReaderSize(nc, 512).ReadString('\n')
		if err != nil || !strings.Contains(line, `"not_authenticated"`) {
			t.Fatalf("connection %d: %q %v", i, line, err)
		}
		conns = append(conns, nc)
	}
	after := heapInUse()
	if n := a.srv.Metrics().ConnectionsOpen; n != idle {
		t.Fatalf("%d connections open, want %d", n, idle)
	}
	per := (int64(after) - int64(before)) / idle
	t.Logf("heap and stacks: %d KiB before, %d KiB with %d idle connections (%d B each)", before>>10, after>>10, idle, per)
	// The reader's 16 KiB buffer, two goroutines and the bookkeeping: well
	// under 64 KiB; a queue allocated whole would be 1.5 MiB.
	if per > 64<<10 {
		t.Errorf("%d B per idle connection, want at most 64 KiB", per)
	}
	runtime.KeepAlive(conns)
}
