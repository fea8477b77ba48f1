package m2pa

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/isupgw/isupgw/mtp/internal/l2conn"
	"github.com/isupgw/isupgw/mtp/mtp3/l2"
	"github.com/isupgw/isupgw/mtp/transport"
)

// Config describes one M2PA link: one SCTP association, which the link
// dials (client) or accepts on its own listener (server).
type Config struct {
	Name      string
	Transport transport.Kind
	Dial      netip.AddrPort // client role
	Listen    netip.AddrPort // server role
	Timers    Timers
	Clock     l2.Clock
	// Redial is the pause between failed dials (default 1 s).
	Redial           time.Duration
	TransportOptions []transport.Option
	// Tap, when set, sees every M2PA message sent and received (captures).
	Tap func(out bool, local, remote netip.AddrPort, stream uint16, b []byte)
}

// Link is an M2PA signalling link; it implements l2.Link.
type Link struct {
	cfg   Config
	m     *machine
	stats Stats

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	ln     transport.Listener

	carrier *l2conn.Carrier

	mu     sync.Mutex
	held   bool          // Hold(true): no association wanted
	resume chan struct{} // closed by Hold(false)
}

var _ l2.Link = (*Link)(nil)

// New checks cfg and builds the link; Open brings its association up.
func New(cfg Config) (*Link, error) {
	if cfg.Name == "" {
		return nil, errors.New("m2pa: link needs a name")
	}
	if cfg.Dial.IsValid() == cfg.Listen.IsValid() {
		return nil, fmt.Errorf("m2pa: link %s needs exactly one of Dial (client) and Listen (server)", cfg.Name)
	}
	if cfg.Clock == nil {
		cfg.Clock = l2.RealClock{}
	}
	if cfg.Redial <= 0 {
		cfg.Redial = time.Second
	}
	l := &Link{cfg: cfg, carrier: l2conn.New()}
	l.m = newMachine(cfg.Clock, cfg.Timers, &l.stats, func(b []byte, stream uint16) {
		l.carrier.Enqueue(l2conn.Packet{B: b, Stream: stream})
	})
	l.ctx, l.cancel = context.WithCancel(context.Background())
	return l, nil
}

// Open starts listening or dialling. The association comes and goes on its
// own; alignment starts when MTP3 calls Start.
func (l *Link) Open() error {
	if l.cfg.Listen.IsValid() {
		ln, err := transport.Listen(l.cfg.Transport, l.cfg.Listen, l.cfg.TransportOptions...)
		if err != nil {
			return fmt.Errorf("m2pa: link %s: %w", l.cfg.Name, err)
		}
		l.ln = ln
		l.wg.Add(1)
		go l.acceptLoop()
		return nil
	}
	l.wg.Add(1)
	go l.dialLoop()
	return nil
}

// Addr is the listening address (server role).
func (l *Link) Addr() netip.AddrPort {
	if l.ln == nil {
		return netip.AddrPort{}
	}
	return l.ln.Addr()
}

// Close ends the association and the listener.
func (l *Link) Close() error {
	l.cancel()
	l.m.Stop()
	if l.ln != nil {
		_ = l.ln.Close()
	}
	l.carrier.Close()
	l.wg.Wait()
	return nil
}

// Abort drops the current association without a word (fault tests: it is
// what a cable cut or a crashed peer looks like). A client dials again.
func (l *Link) Abort() { l.carrier.Close() }

// Hold(true) drops the association and makes no new one (a client stops
// dialling, a server closes what it accepts) until Hold(false): an
// operator's deactivation, and how fault tests keep a link down.
func (l *Link) Hold(on bool) {
	l.mu.Lock()
	if on && !l.held {
		l.held = true
		l.resume = make(chan struct{})
	} else if !on && l.held {
		l.held = false
		close(l.resume)
	}
	l.mu.Unlock()
	if on {
		l.carrier.Close()
	}
}

// waitUnheld blocks while the link is held; false when the link closes.
func (l *Link) waitUnheld() bool {
	l.mu.Lock()
	held, ch := l.held, l.resume
	l.mu.Unlock()
	if !held {
		return true
	}
	select {
	case <-ch:
		return true
	case <-l.ctx.Done():
		return false
	}
}

// Stats are the link's counters.
func (l *Link) Stats() *Stats { return &l.stats }

// State names the link state, for status output.
func (l *Link) State() string { return l.m.Snapshot().State.String() }

// Name is the configured name.
func (l *Link) Name() string { return l.cfg.Name }

// Start begins alignment (l2.Link).
func (l *Link) Start(u l2.User) { l.m.Start(u) }

// Stop takes the link out of service (l2.Link).
func (l *Link) Stop() { l.m.Stop() }

// Emergency selects emergency proving (l2.Link).
func (l *Link) Emergency(on bool) { l.m.Emergency(on) }

// Send transmits an MSU (l2.Link).
func (l *Link) Send(priority uint8, msu []byte) error { return l.m.send(priority, msu) }

// BSNT is the last FSN received (l2.Link).
func (l *Link) BSNT() (uint32, bool) { return l.m.BSNT() }

// Retrieve hands back unacknowledged MSUs (l2.Link).
func (l *Link) Retrieve(fsnc uint32, ok bool) [][]byte { return l.m.Retrieve(fsnc, ok) }

// Outstanding is the unacknowledged MSUs (l2.Link).
func (l *Link) Outstanding() int { return l.m.Snapshot().Unacked }

// SeqMask is 24 bits (RFC 4165 §2.2).
func (l *Link) SeqMask() uint32 { return SeqMask }

func (l *Link) dialLoop() {
	defer l.wg.Done()
	for l.ctx.Err() == nil {
		if !l.waitUnheld() {
			return
		}
		ctx, cancel := context.WithTimeout(l.ctx, 10*time.Second)
		c, err := transport.Dial(ctx, l.cfg.Transport, l.cfg.Dial, l.cfg.TransportOptions...)
		cancel()
		if err == nil {
			l.serve(c)
		}
		select {
		case <-l.ctx.Done():
		case <-time.After(l.cfg.Redial):
		}
	}
}

// acceptLoop serves one association at a time; a new one replaces the
// current (the peer restarted, and the old association may not have noticed
// yet).
func (l *Link) acceptLoop() {
	defer l.wg.Done()
	var (
		done chan struct{}
		cur  transport.Conn
	)
	for {
		c, err := l.ln.Accept(l.ctx)
		if err != nil {
			if done != nil {
				<-done
			}
			return
		}
		l.mu.Lock()
		held := l.held
		l.mu.Unlock()
		if held {
			_ = c.Close()
			continue
		}
		if done != nil {
			// The old association itself, not the carrier's current one:
			// its goroutine may not have handed it to the carrier yet.
			_ = cur.Close()
			<-done
		}
		done, cur = make(chan struct{}), c
		go func(c transport.Conn, done chan struct{}) { defer close(done); l.serve(c) }(c, done)
	}
}

// serve runs one association until it ends; closing the link ends it too,
// even one that reached the carrier after Close looked.
func (l *Link) serve(c transport.Conn) {
	stop := context.AfterFunc(l.ctx, func() { _ = c.Close() })
	defer stop()
	err := l.carrier.Serve(association{c, l.cfg.Tap}, MaxMessage+1, l.m.Connected, l.m.receive)
	l.m.Lost(fmt.Sprintf("SCTP association lost (%v)", err))
}

// association is an SCTP association as the carrier reads and writes it,
// with the tap, if any, seeing every message.
type association struct {
	transport.Conn
	tap func(out bool, local, remote netip.AddrPort, stream uint16, b []byte)
}

func (a association) Read(buf []byte) (int, error) {
	n, stream, _, err := a.ReadMsg(buf)
	if err == nil && a.tap != nil {
		a.tap(false, a.LocalAddr(), a.RemoteAddr(), stream, buf[:n])
	}
	return n, err
}

func (a association) Write(p l2conn.Packet) error {
	if a.tap != nil {
		a.tap(true, a.LocalAddr(), a.RemoteAddr(), p.Stream, p.B)
	}
	return a.WriteMsg(p.B, p.Stream, PPID)
}
