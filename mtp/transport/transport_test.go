package transport

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"testing"
	"time"
)

var loopback = netip.MustParseAddrPort("127.0.0.1:0")

func testKinds(t *testing.T) []Kind {
	kinds := []Kind{KindUDP}
	if os.Geteuid() == 0 {
		kinds = append(kinds, KindRaw)
	} else {
		t.Log("not root: raw transport not tested")
	}
	return kinds
}

// pair brings up one association over kind and returns both ends.
func pair(t *testing.T, kind Kind, opts ...Option) (client, server Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ln, err := Listen(kind, loopback, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	accepted := make(chan Conn, 1)
	go func() {
		c, err := ln.Accept(ctx)
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	client, err = Dial(ctx, kind, ln.Addr(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.FailNow()
	}
	t.Cleanup(func() { _ = client.Close(); _ = server.Close() })
	return client, server
}

// TestMessagesBothWaysKeepStreamOrder sends numbered messages on several
// streams in both directions over a real association and checks that each
// stream's messages arrive complete, in order, with stream and PPID intact.
func TestMessagesBothWaysKeepStreamOrder(t *testing.T) {
	for _, kind := range testKinds(t) {
		t.Run(kind.String(), func(t *testing.T) {
			c, s := pair(t, kind, WithStreams(8))
			if got := c.OutboundStreams(); got != 8 {
				t.Fatalf("client outbound streams %d, want 8", got)
			}
			const perStream = 300
			for _, dir := range []struct {
				name     string
				from, to Conn
			}{{"c->s", c, s}, {"s->c", s, c}} {
				errc := make(chan error, 1)
				go func() {
					for i := 0; i < perStream; i++ {
						for st := uint16(1); st < 8; st++ {
							if err := dir.from.WriteMsg([]byte(fmt.Sprintf("%d:%d", st, i)), st, PPIDM3UA); err != nil {
								errc <- err
								return
							}
						}
					}
					errc <- nil
				}()
				next := map[uint16]int{}
				buf := make([]byte, 256)
				for k := 0; k < perStream*7; k++ {
					n, st, ppid, err := dir.to.ReadMsg(buf)
					if err != nil {
						t.Fatalf("%s: read %d: %v", dir.name, k, err)
					}
					if ppid != PPIDM3UA {
						t.Fatalf("%s: ppid %d", dir.name, ppid)
					}
					if want := fmt.Sprintf("%d:%d", st, next[st]); string(buf[:n]) != want {
						t.Fatalf("%s: stream %d got %q want %q", dir.name, st, buf[:n], want)
					}
					next[st]++
				}
				if err := <-errc; err != nil {
					t.Fatal(err)
				}
			}
			if c.RemoteAddr().Port() != s.LocalAddr().Port() || s.RemoteAddr().Port() != c.LocalAddr().Port() {
				t.Fatalf("ports disagree: client %v->%v server %v->%v", c.LocalAddr(), c.RemoteAddr(), s.LocalAddr(), s.RemoteAddr())
			}
		})
	}
}

// TestWriteBeyondStreamsRefused checks the negotiated stream count is enforced.
func TestWriteBeyondStreamsRefused(t *testing.T) {
	c, _ := pair(t, KindUDP, WithStreams(4))
	if err := c.WriteMsg([]byte("x"), 4, PPIDM3UA); !errors.Is(err, ErrStreamNumber) {
		t.Fatalf("got %v, want ErrStreamNumber", err)
	}
}

// TestShutdownEndsPeer checks a graceful Shutdown delivers queued data and
// then the peer's ReadMsg reports the association closed.
func TestShutdownEndsPeer(t *testing.T) {
	for _, kind := range testKinds(t) {
		t.Run(kind.String(), func(t *testing.T) {
			c, s := pair(t, kind)
			if err := c.WriteMsg([]byte("last"), 1, PPIDM3UA); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := c.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 64)
			n, _, _, err := s.ReadMsg(buf)
			if err != nil || string(buf[:n]) != "last" {
				t.Fatalf("got %q %v", buf[:n], err)
			}
			if _, _, _, err := s.ReadMsg(buf); err == nil {
				t.Fatal("read after peer shutdown succeeded")
			}
		})
	}
}

// TestDialNobodyFails checks dialing a port with no listener ends with an
// error before the deadline instead of hanging.
func TestDialNobodyFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := Dial(ctx, KindUDP, netip.MustParseAddrPort("127.0.0.1:9"), WithStreams(4)); err == nil {
		t.Fatal("dial to nobody succeeded")
	}
}

// TestKernelFailsFastNamingAlternatives: this host has no kernel SCTP; the
// error must come at once and name udp and raw.
func TestKernelFailsFastNamingAlternatives(t *testing.T) {
	if KernelAvailable() == nil {
		t.Skip("this kernel has SCTP")
	}
	_, err := Dial(context.Background(), KindKernel, netip.MustParseAddrPort("127.0.0.1:2905"))
	if !errors.Is(err, ErrKernelSCTPUnavailable) {
		t.Fatalf("got %v", err)
	}
	for _, w := range []string{"udp", "raw"} {
		if !contains(err.Error(), w) {
			t.Fatalf("error %q does not name %q", err, w)
		}
	}
	if _, err := Listen(KindKernel, loopback); !errors.Is(err, ErrKernelSCTPUnavailable) {
		t.Fatalf("listen: %v", err)
	}
	k, why := Resolve(KindAuto)
	if k != KindUDP || why == "" {
		t.Fatalf("auto resolved to %v (%q)", k, why)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestServeKeepsStreamOrder: with Serve, each stream's messages reach the
// handler in order, and Serve returns when the peer ends the association.
func TestServeKeepsStreamOrder(t *testing.T) {
	c, s := pair(t, KindUDP, WithStreams(4))
	srv, ok := s.(Server)
	if !ok {
		t.Fatal("pion conn does not implement Server")
	}
	const per = 500
	got := make(chan string, 3*per)
	served := make(chan error, 1)
	go func() {
		served <- srv.Serve(func(b []byte, st uint16, _ uint32) { got <- fmt.Sprintf("%d:%s", st, b) })
	}()
	for i := 0; i < per; i++ {
		for st := uint16(1); st < 4; st++ {
			if err := c.WriteMsg([]byte(fmt.Sprint(i)), st, PPIDM3UA); err != nil {
				t.Fatal(err)
			}
		}
	}
	next := map[string]int{}
	for k := 0; k < 3*per; k++ {
		m := <-got
		var st, i int
		if _, err := fmt.Sscanf(m, "%d:%d", &st, &i); err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprint(st)
		if i != next[key] {
			t.Fatalf("stream %d: %d after %d", st, i, next[key]-1)
		}
		next[key]++
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = c.Shutdown(ctx)
	select {
	case <-served:
	case <-ctx.Done():
		t.Fatal("Serve did not return after shutdown")
	}
}

// TestListenerCloseKeepsAccepted: closing a listener stops new
// associations but an accepted one still carries data both ways, so it can
// end gracefully (the M3UA endpoint closes its listener while stopping).
func TestListenerCloseKeepsAccepted(t *testing.T) {
	for _, kind := range testKinds(t) {
		t.Run(kind.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			ln, err := Listen(kind, loopback)
			if err != nil {
				t.Fatal(err)
			}
			accepted := make(chan Conn, 1)
			go func() { c, _ := ln.Accept(ctx); accepted <- c }()
			c, err := Dial(ctx, kind, ln.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			s := <-accepted
			if s == nil {
				t.Fatal("not accepted")
			}
			defer s.Close()
			_ = ln.Close()
			if err := s.WriteMsg([]byte("after close"), 1, PPIDM3UA); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 64)
			n, _, _, err := c.ReadMsg(buf)
			if err != nil || string(buf[:n]) != "after close" {
				t.Fatalf("got %q %v", buf[:n], err)
			}
			if err := c.WriteMsg([]byte("reply"), 1, PPIDM3UA); err != nil {
				t.Fatal(err)
			}
			if n, _, _, err = s.ReadMsg(buf); err != nil || string(buf[:n]) != "reply" {
				t.Fatalf("got %q %v", buf[:n], err)
			}
			short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancelShort()
			if _, err := Dial(short, kind, ln.Addr()); err == nil {
				t.Fatal("closed listener accepted a new association")
			}
		})
	}
}

// TestUDPOverIPv6Loopback: the udp transport works on ::1 as on 127.0.0.1.
func TestUDPOverIPv6Loopback(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ln, err := Listen(KindUDP, netip.MustParseAddrPort("[::1]:0"))
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	defer ln.Close()
	go func() {
		if s, err := ln.Accept(ctx); err == nil {
			buf := make([]byte, 16)
			n, st, _, _ := s.ReadMsg(buf)
			_ = s.WriteMsg(buf[:n], st, PPIDM3UA)
		}
	}()
	c, err := Dial(ctx, KindUDP, ln.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WriteMsg([]byte("v6"), 2, PPIDM3UA); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, st, _, err := c.ReadMsg(buf)
	if err != nil || string(buf[:n]) != "v6" || st != 2 || !c.RemoteAddr().Addr().Is6() {
		t.Fatalf("%q %d %v %v", buf[:n], st, err, c.RemoteAddr())
	}
}
