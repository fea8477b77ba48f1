package m2pa

import (
	"net/netip"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp/transport"
)

// chanUser turns indications into channel sends, so the test waits on them.
type chanUser struct {
	ev  chan string
	msu chan []byte
}

func newChanUser() *chanUser {
	return &chanUser{ev: make(chan string, 64), msu: make(chan []byte, 1024)}
}

func (u *chanUser) InService()                    { u.ev <- "in service" }
func (u *chanUser) OutOfService(reason string)    { u.ev <- "out of service" }
func (u *chanUser) Received(m []byte)             { u.msu <- append([]byte(nil), m...) }
func (u *chanUser) RemoteProcessorOutage(on bool) {}
func (u *chanUser) Congested(on bool)             {}

func wait[T any](t *testing.T, ch chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var z T
	return z
}

func fastTimers() Timers {
	tm := DefaultTimers()
	tm.T4N = 50 * time.Millisecond
	tm.T4E = 20 * time.Millisecond
	tm.Repeat = 100 * time.Millisecond
	return tm
}

// TestLinkOverUDPTransport aligns a client and a server link over the
// userspace SCTP-over-UDP transport on loopback, carries MSUs both ways in
// order, and reports the association's loss as out of service.
func TestLinkOverUDPTransport(t *testing.T) {
	srv, err := New(Config{Name: "srv", Transport: transport.KindUDP, Listen: netip.MustParseAddrPort("127.0.0.1:0"), Timers: fastTimers()})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Open(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cli, err := New(Config{Name: "cli", Transport: transport.KindUDP, Dial: srv.Addr(), Timers: fastTimers(), Redial: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.Open(); err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	us, uc := newChanUser(), newChanUser()
	srv.Start(us)
	cli.Start(uc)
	if e := wait(t, us.ev, "server in service"); e != "in service" {
		t.Fatal(e)
	}
	if e := wait(t, uc.ev, "client in service"); e != "in service" {
		t.Fatal(e)
	}
	const n = 500
	for i := range n {
		if err := cli.Send(0, []byte{0x85, byte(i), byte(i >> 8)}); err != nil {
			t.Fatal(err)
		}
		if err := srv.Send(0, []byte{0x85, byte(i), byte(i >> 8)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		a, b := wait(t, us.msu, "MSU at server"), wait(t, uc.msu, "MSU at client")
		if int(a[1])|int(a[2])<<8 != i || int(b[1])|int(b[2])<<8 != i {
			t.Fatalf("MSU %d out of order: %v %v", i, a, b)
		}
	}
	cli.Abort()
	if e := wait(t, uc.ev, "client out of service"); e != "out of service" {
		t.Fatal(e)
	}
	if e := wait(t, us.ev, "server out of service"); e != "out of service" {
		t.Fatal(e)
	}
	// Restoration: the client dials again and both align anew.
	srv.Start(us)
	cli.Start(uc)
	if e := wait(t, us.ev, "server back in service"); e != "in service" {
		t.Fatal(e)
	}
	if e := wait(t, uc.ev, "client back in service"); e != "in service" {
		t.Fatal(e)
	}
}

// TestServerTakesNewAssociation: a client that comes back with a new
// association while the server still holds the old one (a peer restart the
// server has not noticed) is served: the old association is dropped.
func TestServerTakesNewAssociation(t *testing.T) {
	srv, _ := New(Config{Name: "srv", Transport: transport.KindUDP, Listen: netip.MustParseAddrPort("127.0.0.1:0"), Timers: fastTimers()})
	if err := srv.Open(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	us := newChanUser()
	srv.Start(us)
	// A first client aligns, then goes silent without closing (its
	// association stays up at the server).
	ctx := t.Context()
	zombie, err := transport.Dial(ctx, transport.KindUDP, srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer zombie.Close()
	cli, _ := New(Config{Name: "cli", Transport: transport.KindUDP, Dial: srv.Addr(), Timers: fastTimers(), Redial: 50 * time.Millisecond})
	if err := cli.Open(); err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	uc := newChanUser()
	cli.Start(uc)
	// The server drops the old association (its MTP3 hears of it and
	// restarts the link), and aligns on the new one.
	if e := wait(t, us.ev, "server told the old association is gone"); e != "out of service" {
		t.Fatal(e)
	}
	srv.Start(us)
	// The client may see its first alignment fail while the server still
	// holds the old association (out of service, then a redial): bounded.
	e := wait(t, uc.ev, "client in service over the second association")
	for i := 0; e == "out of service" && i < 5; i++ {
		e = wait(t, uc.ev, "client in service after a redial")
	}
	if e != "in service" {
		t.Fatal(e)
	}
	if e := wait(t, us.ev, "server in service"); e != "in service" {
		t.Fatal(e)
	}
}
