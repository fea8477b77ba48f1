// Package clienttest is a fake gateway that speaks the host API's lines
// (docs/host-api.md), for tests of hosts that attach to several gateways
// (host/client.Multi, loadgen): it can be made standby, serves the
// destinations it is given, and answers and releases calls at once.
package clienttest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/isupgw/isupgw/host/wire"
)

// Fake is one gateway; its state is shared by every connection to it.
type Fake struct {
	// Answer makes every acked outseize answered at once (an "answered"
	// line after the ack).
	Answer bool

	mu      sync.Mutex
	standby bool
	serves  []uint32
	calls   int
	conns   []*fakeConn
}

type fakeConn struct {
	nc  net.Conn
	wmu sync.Mutex
}

// New is a fake gateway, standby or active, with circuit groups towards
// serves (none: its circuits request lists no group).
func New(standby bool, serves ...uint32) *Fake {
	return &Fake{standby: standby, serves: serves}
}

// Pipe connects a client end to the fake over net.Pipe.
func (f *Fake) Pipe(t testing.TB) net.Conn {
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	go f.serve(a)
	return b
}

// Listen accepts TCP connections on loopback until the test ends and
// returns the address.
func (f *Fake) Listen(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var accepted []net.Conn
	done := false
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		done = true
		for _, nc := range accepted {
			nc.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if done {
				nc.Close()
			} else {
				accepted = append(accepted, nc)
			}
			mu.Unlock()
			go f.serve(nc)
		}
	}()
	return ln.Addr().String()
}

// Connections is how many hosts are connected (hello done).
func (f *Fake) Connections() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.conns)
}

// Calls is how many outseizes it acked.
func (f *Fake) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// SetStandby changes the role; alarm says whether its hosts are told (alarm
// 0x40, or its alarm_cleared); without, it only starts or stops refusing, as
// a gateway whose alarm is still on its way.
func (f *Fake) SetStandby(standby, alarm bool) {
	f.mu.Lock()
	f.standby = standby
	conns := append([]*fakeConn(nil), f.conns...)
	f.mu.Unlock()
	if alarm {
		for _, c := range conns {
			c.send(standbyAlarm(standby))
		}
	}
}

// Drop ends every connection to the fake, as a gateway that stops does
// (it goes on accepting new ones: a restarted instance).
func (f *Fake) Drop() {
	f.mu.Lock()
	conns := f.conns
	f.conns = nil
	f.mu.Unlock()
	for _, c := range conns {
		c.nc.Close()
	}
}

// Send writes a line to every connected host.
func (f *Fake) Send(line string) {
	f.mu.Lock()
	conns := append([]*fakeConn(nil), f.conns...)
	f.mu.Unlock()
	for _, c := range conns {
		c.send(line)
	}
}

func standbyAlarm(standby bool) string {
	if standby {
		return `{"type":"alarm","number":64,"severity":1,"text":"standby","data":{"role":"standby"}}`
	}
	return `{"type":"alarm_cleared","number":64,"severity":1,"text":"takeover","data":{"role":"active"}}`
}

func (c *fakeConn) send(line string) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, _ = c.nc.Write([]byte(line + "\n"))
}

func (f *Fake) serve(nc net.Conn) {
	c := &fakeConn{nc: nc}
	sc := bufio.NewScanner(nc)
	for sc.Scan() {
		var req struct {
			Seq  uint64 `json:"seq"`
			Type string `json:"type"`
			Call uint64 `json:"call"`
			DPC  uint32 `json:"dpc"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil {
			return
		}
		f.mu.Lock()
		standby := f.standby
		if req.Type == wire.TypeOutseize && !standby {
			f.calls++
		}
		n := f.calls
		f.mu.Unlock()
		switch {
		case req.Type == wire.TypeHello:
			c.send(fmt.Sprintf(`{"type":"ack","seq":%d,"status":16,"data":{"version":1}}`, req.Seq))
			f.mu.Lock()
			f.conns = append(f.conns, c)
			f.mu.Unlock()
			if standby {
				c.send(standbyAlarm(true))
			}
		case req.Type == wire.TypeCircuits:
			var groups []string
			for _, pc := range f.serves {
				groups = append(groups, fmt.Sprintf(`{"group":"g%d","dpc":%d,"total":8}`, pc, pc))
			}
			c.send(fmt.Sprintf(`{"type":"ack","seq":%d,"status":16,"data":{"total":0,"groups":[%s]}}`, req.Seq, strings.Join(groups, ",")))
		case req.Type == wire.TypeOutseize && standby:
			c.send(fmt.Sprintf(`{"type":"nak","seq":%d,"status":288,"name":"standby"}`, req.Seq))
		case req.Type == wire.TypeOutseize:
			c.send(fmt.Sprintf(`{"type":"ack","seq":%d,"status":16,"call":%d,"dpc":%d,"cic":%d}`, req.Seq, n, req.DPC, n))
			if f.Answer {
				c.send(fmt.Sprintf(`{"type":"answered","call":%d,"message":"ANM"}`, n))
			}
		case req.Type == wire.TypeRelease:
			c.send(fmt.Sprintf(`{"type":"ack","seq":%d,"status":16,"call":%d}`, req.Seq, req.Call))
			c.send(fmt.Sprintf(`{"type":"released","call":%d,"cause":16,"location":1,"remote":false}`, req.Call))
		default:
			c.send(fmt.Sprintf(`{"type":"ack","seq":%d,"status":16}`, req.Seq))
		}
	}
}
