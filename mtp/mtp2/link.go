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

	"github.com/isupgw/isupgw/mtp/internal/l2conn"
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

	carrier *l2conn.Carrier
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
	l := &Link{cfg: cfg, carrier: l2conn.New()}
	l.m = newMachine(cfg.Clock, cfg.Timers, &l.stats, func(b []byte) { l.carrier.Enqueue(l2conn.Packet{B: b}) })
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
	l.m.Stop()
	if l.ln != nil {
		_ = l.ln.Close()
	}
	l.carrier.Close()
	l.wg.Wait()
	return nil
}

// Stats are the link's counters.
func (l *Link) Stats() *Stats { return &l.stats }

// State names the link state.
func (l *Link) State() string { return l.m.Snapshot().State.String() }

// Name is the configured name.
func (l *Link) Name() string { return l.cfg.Name }

// Start begins alignment (l2.Link).
func (l *Link) Start(u l2.User) { l.m.Start(u) }

// Stop takes the link out of service (l2.Link).
func (l *Link) Stop() { l.m.Stop() }

// Emergency selects emergency alignment (SIE) (l2.Link).
func (l *Link) Emergency(on bool) { l.m.Emergency(on) }

// Send transmits an MSU (l2.Link). Priority has no place in MTP2.
func (l *Link) Send(_ uint8, msu []byte) error { return l.m.send(msu) }

// BSNT is the last FSN accepted (l2.Link).
func (l *Link) BSNT() (uint32, bool) { return l.m.BSNT() }

// Retrieve hands back unacknowledged and unsent MSUs (l2.Link).
func (l *Link) Retrieve(fsnc uint32, ok bool) [][]byte { return l.m.Retrieve(fsnc, ok) }

// Outstanding is the unacknowledged and the queued MSUs (l2.Link).
func (l *Link) Outstanding() int { s := l.m.Snapshot(); return s.Unacked + s.Queued }

// SeqMask is 7 bits (Q.703 §2.3.1).
func (l *Link) SeqMask() uint32 { return SeqMask }

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

// serve runs one socket until it ends; closing the link ends it too, even
// one that reached the carrier after Close looked.
func (l *Link) serve(c *net.UnixConn) {
	stop := context.AfterFunc(l.ctx, func() { _ = c.Close() })
	defer stop()
	err := l.carrier.Serve(&socket{c, l.cfg.Tap}, HeaderLen+MaxSIF+FCSLen+16, l.m.Connected, l.m.receive)
	l.m.Lost(fmt.Sprintf("socket closed (%v)", err))
}

// socket is a SOCK_SEQPACKET socket as the carrier reads and writes it,
// with the tap, if any, seeing every signal unit.
type socket struct {
	*net.UnixConn
	tap func(out bool, su []byte)
}

func (s *socket) Read(buf []byte) (int, error) {
	n, err := s.UnixConn.Read(buf)
	if err == nil && n == 0 {
		err = errors.New("peer closed the socket")
	}
	if err == nil && s.tap != nil {
		s.tap(false, buf[:n])
	}
	return n, err
}

func (s *socket) Write(p l2conn.Packet) error {
	if s.tap != nil {
		s.tap(true, p.B)
	}
	_, err := s.UnixConn.Write(p.B)
	return err
}
