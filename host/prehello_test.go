package host_test

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host"
	"github.com/isupgw/isupgw/host/client"
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
