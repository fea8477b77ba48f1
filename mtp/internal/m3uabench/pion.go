package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/pion/logging"
	"github.com/pion/sctp"
)

// Bare pion/sctp between the processes: the same association options the
// udp transport uses (interleaving off, 4 MiB receive window, non-blocking
// writes held back above 1 MiB buffered), no M3UA. With -pionstreams N > 1
// messages go round-robin over streams 1..N and each stream has its own
// reader, as the M3UA transport does.

const maxBuffered = 1 << 20

func pionOptions(c net.Conn) []sctp.AssociationOption {
	return []sctp.AssociationOption{
		sctp.WithNetConn(c),
		sctp.WithLoggerFactory(logging.NewDefaultLoggerFactory()),
		sctp.WithEnableInterleaving(false),
		sctp.WithMaxReceiveBufferSize(4 << 20),
	}
}

// serverConn is a net.Conn over an unconnected UDP socket that answers the
// first peer it hears from.
type serverConn struct {
	*net.UDPConn
	mu   sync.Mutex
	peer *net.UDPAddr
}

func (c *serverConn) Read(b []byte) (int, error) {
	n, from, err := c.ReadFromUDP(b)
	if err == nil {
		c.mu.Lock()
		c.peer = from
		c.mu.Unlock()
	}
	return n, err
}

func (c *serverConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	p := c.peer
	c.mu.Unlock()
	if p == nil {
		return 0, errors.New("no peer yet")
	}
	return c.WriteToUDP(b, p)
}

func (c *serverConn) RemoteAddr() net.Addr { return c.peer }

// heldStream writes with the transport's backpressure.
type heldStream struct {
	s   *sctp.Stream
	low chan struct{}
}

func newHeld(s *sctp.Stream) *heldStream {
	h := &heldStream{s: s, low: make(chan struct{}, 1)}
	s.SetBufferedAmountLowThreshold(maxBuffered / 2)
	s.OnBufferedAmountLow(func() {
		select {
		case h.low <- struct{}{}:
		default:
		}
	})
	return h
}

func (h *heldStream) write(b []byte) error {
	for h.s.BufferedAmount() > maxBuffered {
		<-h.low
	}
	_, err := h.s.WriteSCTP(b, sctp.PayloadTypeWebRTCBinary)
	return err
}

func pionServer(mode string, count int) error {
	uc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return err
	}
	_ = uc.SetReadBuffer(4 << 20)
	_ = uc.SetWriteBuffer(4 << 20)
	fmt.Printf("ADDR %s\n", uc.LocalAddr())
	sopts := []sctp.ServerOption{}
	for _, o := range pionOptions(&serverConn{UDPConn: uc}) {
		sopts = append(sopts, o)
	}
	a, err := sctp.ServerWithOptions(sopts...)
	if err != nil {
		return err
	}
	var (
		mu     sync.Mutex
		got    int
		before = mallocs()
		done   = make(chan struct{})
	)
	// One reader per stream, each answering on its own stream.
	go func() {
		for {
			s, err := a.AcceptStream()
			if err != nil {
				return
			}
			go func() {
				h := newHeld(s)
				buf := make([]byte, 65536)
				for {
					n, _, err := s.ReadSCTP(buf)
					if err != nil {
						return
					}
					mu.Lock()
					got++
					last := got == count
					mu.Unlock()
					if mode == "rr" || last {
						_ = h.write(buf[:n])
					}
					if last {
						close(done)
					}
				}
			}()
		}
	}()
	<-done
	fmt.Printf("ALLOCS %.2f\n", perMsg(before, count))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = a.Shutdown(ctx)
	return nil
}

func pionClient(addr, mode string, count int) (rate, allocs float64, err error) {
	ra, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return 0, 0, err
	}
	uc, err := net.DialUDP("udp", nil, ra)
	if err != nil {
		return 0, 0, err
	}
	_ = uc.SetReadBuffer(4 << 20)
	_ = uc.SetWriteBuffer(4 << 20)
	copts := []sctp.ClientOption{}
	for _, o := range pionOptions(uc) {
		copts = append(copts, o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := sctp.ClientContext(ctx, copts...)
	if err != nil {
		return 0, 0, err
	}
	defer a.Close()
	streams := make([]*heldStream, *pionN)
	replies := make(chan struct{}, 1024)
	for i := range streams {
		s, err := a.OpenStream(uint16(i+1), sctp.PayloadTypeWebRTCBinary)
		if err != nil {
			return 0, 0, err
		}
		streams[i] = newHeld(s)
		go func() {
			buf := make([]byte, 65536)
			for {
				if _, _, err := s.ReadSCTP(buf); err != nil {
					return
				}
				replies <- struct{}{}
			}
		}()
	}
	msg := make([]byte, *payload)
	send := func(i int) error { return streams[i%len(streams)].write(msg) }
	before := mallocs()
	start := time.Now()
	switch mode {
	case "oneway":
		for i := 0; i < count; i++ {
			if err := send(i); err != nil {
				return 0, 0, err
			}
		}
		<-replies
	case "rr":
		sent := 0
		for ; sent < *window; sent++ {
			if err := send(sent); err != nil {
				return 0, 0, err
			}
		}
		for got := 0; got < count; got++ {
			<-replies
			if sent < count {
				if err := send(sent); err != nil {
					return 0, 0, err
				}
				sent++
			}
		}
	}
	return since(start, count), perMsg(before, count), nil
}
