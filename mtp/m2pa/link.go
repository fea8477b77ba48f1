package m2pa

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

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

// Streams (RFC 4165): Link Status messages about the link (alignment,
// proving, ready, out of service) on stream 0; User Data, and the Link Status
// messages that must stay in order with it (processor outage and recovery,
// busy and busy ended), on stream 1. The Yate capture does the same.
const (
	streamStatus = 0
	streamData   = 1
)

// Link is an M2PA signalling link; it implements l2.Link.
type Link struct {
	cfg   Config
	m     *machine
	stats Stats

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	ln     transport.Listener

	mu     sync.Mutex
	conn   transport.Conn
	outbox []outMsg
	kick   chan struct{}
	held   bool          // Hold(true): no association wanted
	resume chan struct{} // closed by Hold(false)
}

type outMsg struct {
	b      []byte
	stream uint16
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
	l := &Link{cfg: cfg, kick: make(chan struct{}, 1)}
	l.m = newMachine(cfg.Clock, cfg.Timers, &l.stats, l.enqueue)
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
	l.m.stop()
	if l.ln != nil {
		_ = l.ln.Close()
	}
	l.mu.Lock()
	c := l.conn
	l.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
	l.wg.Wait()
	return nil
}

// Abort drops the current association without a word (fault tests: it is
// what a cable cut or a crashed peer looks like). A client dials again.
func (l *Link) Abort() {
	l.mu.Lock()
	c := l.conn
	l.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// Hold(true) drops the association and makes no new one (a client stops
// dialling, a server closes what it accepts) until Hold(false): an
// operator's deactivation, and how fault tests keep a link down.
func (l *Link) Hold(on bool) {
	l.mu.Lock()
	c := l.conn
	if on && !l.held {
		l.held = true
		l.resume = make(chan struct{})
	} else if !on && l.held {
		l.held = false
		close(l.resume)
	}
	l.mu.Unlock()
	if on && c != nil {
		_ = c.Close()
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
func (l *Link) State() string { s, _, _, _, _, _ := l.m.snapshot(); return s.String() }

// Name is the configured name.
func (l *Link) Name() string { return l.cfg.Name }

// Start begins alignment (l2.Link).
func (l *Link) Start(u l2.User) { l.m.start(u) }

// Stop takes the link out of service (l2.Link).
func (l *Link) Stop() { l.m.stop() }

// Emergency selects emergency proving (l2.Link).
func (l *Link) Emergency(on bool) { l.m.setEmergency(on) }

// Send transmits an MSU (l2.Link).
func (l *Link) Send(priority uint8, msu []byte) error { return l.m.send(priority, msu) }

// BSNT is the last FSN received (l2.Link).
func (l *Link) BSNT() (uint32, bool) { return l.m.bsnt() }

// Retrieve hands back unacknowledged MSUs (l2.Link).
func (l *Link) Retrieve(fsnc uint32, ok bool) [][]byte { return l.m.retrieve(fsnc, ok) }

// Outstanding is the unacknowledged MSUs (l2.Link).
func (l *Link) Outstanding() int { _, _, _, _, n, _ := l.m.snapshot(); return n }

// SeqMask is 24 bits (RFC 4165 §2.2).
func (l *Link) SeqMask() uint32 { return SeqMask }

// enqueue is the machine's output: it runs under the machine's lock and
// must not block, so a writer goroutine does the writing.
func (l *Link) enqueue(b []byte, linkStatus bool) {
	stream := uint16(streamData)
	if linkStatus {
		if msg, err := Decode(b); err == nil {
			switch msg.State {
			case StateProcessorOutage, StateProcessorRecovered, StateBusy, StateBusyEnded:
			default:
				stream = streamStatus
			}
		}
	}
	l.mu.Lock()
	if l.conn != nil {
		l.outbox = append(l.outbox, outMsg{b: b, stream: stream})
	}
	l.mu.Unlock()
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

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
	var done chan struct{}
	for {
		c, err := l.ln.Accept(l.ctx)
		if err != nil {
			if done != nil {
				<-done
			}
			return
		}
		l.mu.Lock()
		held, cur := l.held, l.conn
		l.mu.Unlock()
		if held {
			_ = c.Close()
			continue
		}
		if done != nil {
			if cur != nil {
				_ = cur.Close()
			}
			<-done
		}
		done = make(chan struct{})
		go func(c transport.Conn, done chan struct{}) { defer close(done); l.serve(c) }(c, done)
	}
}

// serve runs one association until it ends.
func (l *Link) serve(c transport.Conn) {
	l.mu.Lock()
	l.conn, l.outbox = c, nil
	l.mu.Unlock()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); l.writeLoop(c, done) }()
	l.m.associationUp()
	buf := make([]byte, MaxMessage+1)
	var err error
	for {
		var n int
		var stream uint16
		n, stream, _, err = c.ReadMsg(buf)
		if err != nil {
			break
		}
		if l.cfg.Tap != nil {
			l.cfg.Tap(false, c.LocalAddr(), c.RemoteAddr(), stream, buf[:n])
		}
		l.m.receive(buf[:n])
	}
	l.mu.Lock()
	l.conn, l.outbox = nil, nil
	l.mu.Unlock()
	close(done)
	_ = c.Close()
	wg.Wait()
	l.m.lost(fmt.Sprintf("SCTP association lost (%v)", err))
}

func (l *Link) writeLoop(c transport.Conn, done chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-l.kick:
		}
		l.mu.Lock()
		if l.conn != c {
			l.mu.Unlock()
			return
		}
		batch := l.outbox
		l.outbox = nil
		l.mu.Unlock()
		for _, o := range batch {
			if l.cfg.Tap != nil {
				l.cfg.Tap(true, c.LocalAddr(), c.RemoteAddr(), o.stream, o.b)
			}
			if err := c.WriteMsg(o.b, o.stream, PPID); err != nil {
				_ = c.Close()
				return
			}
		}
	}
}
