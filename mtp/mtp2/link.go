package mtp2

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/isupgw/isupgw/mtp/mtp3/l2"
)

// Config describes one lab link over an AF_UNIX SOCK_SEQPACKET socket.
type Config struct {
	Name string
	// Conn is an already connected socket (one end of Socketpair); else
	// Path names the socket, which the link listens on (Listen) or dials.
	Conn   *net.UnixConn
	Path   string
	Listen bool
	Timers Timers
	Clock  l2.Clock
	Redial time.Duration // between failed dials (default 1 s)
	// Tap sees every signal unit sent and received (captures).
	Tap func(out bool, su []byte)
}

// Link is an MTP2 lab link; it implements l2.Link.
type Link struct {
	cfg   Config
	m     *machine
	stats Stats

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	ln     *net.UnixListener

	mu     sync.Mutex
	conn   *net.UnixConn
	outbox [][]byte
	kick   chan struct{}
}

var _ l2.Link = (*Link)(nil)

// New checks cfg and builds the link; Open brings the socket up.
func New(cfg Config) (*Link, error) {
	if cfg.Name == "" {
		return nil, errors.New("mtp2: link needs a name")
	}
	if cfg.Conn == nil && cfg.Path == "" {
		return nil, fmt.Errorf("mtp2: link %s needs a socket path or a connected socket", cfg.Name)
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

// Socketpair returns two connected SOCK_SEQPACKET sockets.
func Socketpair() (*net.UnixConn, *net.UnixConn, error) {
	fa, fb, err := SocketpairFiles()
	if err != nil {
		return nil, nil, err
	}
	defer fa.Close()
	defer fb.Close()
	ca, err := net.FileConn(fa)
	if err != nil {
		return nil, nil, err
	}
	cb, err := net.FileConn(fb)
	if err != nil {
		ca.Close()
		return nil, nil, err
	}
	return ca.(*net.UnixConn), cb.(*net.UnixConn), nil
}

// SocketpairFiles returns two connected SOCK_SEQPACKET sockets as files,
// one of which can be handed to another process (libss7 reads and writes
// such a descriptor).
func SocketpairFiles() (*os.File, *os.File, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("mtp2: socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "mtp2-a"), os.NewFile(uintptr(fds[1]), "mtp2-b"), nil
}

// Open starts serving the socket.
func (l *Link) Open() error {
	switch {
	case l.cfg.Conn != nil:
		l.wg.Add(1)
		go func() { defer l.wg.Done(); l.serve(l.cfg.Conn) }()
	case l.cfg.Listen:
		ln, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: l.cfg.Path, Net: "unixpacket"})
		if err != nil {
			return fmt.Errorf("mtp2: link %s: %w", l.cfg.Name, err)
		}
		l.ln = ln
		l.wg.Add(1)
		go l.acceptLoop()
	default:
		l.wg.Add(1)
		go l.dialLoop()
	}
	return nil
}

// Close ends the socket (and the listener).
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

// Stats are the link's counters.
func (l *Link) Stats() *Stats { return &l.stats }

// State names the link state.
func (l *Link) State() string { s, _, _, _, _, _ := l.m.snapshot(); return s.String() }

// Name is the configured name.
func (l *Link) Name() string { return l.cfg.Name }

// Start begins alignment (l2.Link).
func (l *Link) Start(u l2.User) { l.m.start(u) }

// Stop takes the link out of service (l2.Link).
func (l *Link) Stop() { l.m.stop() }

// Emergency selects emergency alignment (SIE) (l2.Link).
func (l *Link) Emergency(on bool) { l.m.setEmergency(on) }

// Send transmits an MSU (l2.Link). Priority has no place in MTP2.
func (l *Link) Send(_ uint8, msu []byte) error { return l.m.send(msu) }

// BSNT is the last FSN accepted (l2.Link).
func (l *Link) BSNT() (uint32, bool) { return l.m.bsnt() }

// Retrieve hands back unacknowledged and unsent MSUs (l2.Link).
func (l *Link) Retrieve(fsnc uint32, ok bool) [][]byte { return l.m.retrieve(fsnc, ok) }

// Outstanding is the unacknowledged and the queued MSUs (l2.Link).
func (l *Link) Outstanding() int { _, _, _, _, n, q := l.m.snapshot(); return n + q }

// SeqMask is 7 bits (Q.703 §2.3.1).
func (l *Link) SeqMask() uint32 { return SeqMask }

func (l *Link) enqueue(b []byte) {
	l.mu.Lock()
	if l.conn != nil {
		l.outbox = append(l.outbox, b)
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
		c, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: l.cfg.Path, Net: "unixpacket"})
		if err == nil {
			l.serve(c)
		}
		select {
		case <-l.ctx.Done():
		case <-time.After(l.cfg.Redial):
		}
	}
}

func (l *Link) acceptLoop() {
	defer l.wg.Done()
	for {
		c, err := l.ln.AcceptUnix()
		if err != nil {
			return
		}
		l.serve(c)
	}
}

func (l *Link) serve(c *net.UnixConn) {
	l.mu.Lock()
	l.conn, l.outbox = c, nil
	l.mu.Unlock()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); l.writeLoop(c, done) }()
	l.m.socketUp()
	buf := make([]byte, HeaderLen+MaxSIF+FCSLen+16)
	var err error
	for {
		var n int
		n, err = c.Read(buf)
		if err != nil {
			break
		}
		if n == 0 {
			err = errors.New("peer closed the socket")
			break
		}
		if l.cfg.Tap != nil {
			l.cfg.Tap(false, buf[:n])
		}
		l.m.receive(buf[:n])
	}
	l.mu.Lock()
	l.conn, l.outbox = nil, nil
	l.mu.Unlock()
	close(done)
	_ = c.Close()
	wg.Wait()
	l.m.lost(fmt.Sprintf("socket closed (%v)", err))
}

func (l *Link) writeLoop(c *net.UnixConn, done chan struct{}) {
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
		for _, b := range batch {
			if l.cfg.Tap != nil {
				l.cfg.Tap(true, b)
			}
			if _, err := c.Write(b); err != nil {
				_ = c.Close()
				return
			}
		}
	}
}
