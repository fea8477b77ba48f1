package transport

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/pion/sctp"
)

// pionConn is a Conn on a pion/sctp association. pion delivers each stream
// separately, so one goroutine per stream feeds a single inbound queue; order
// within a stream is kept because each stream has exactly one reader.
type pionConn struct {
	kind        Kind
	assoc       *sctp.Association
	wire        *pionWire
	maxBuffered uint64
	maxMessage  int

	mu      sync.Mutex
	streams map[uint16]*pionStream
	fast    [64]atomic.Pointer[pionStream] // lock-free lookup for the usual stream numbers

	in       chan inbound
	handler  func(b []byte, stream uint16, ppid uint32)
	started  chan struct{} // closed by the first ReadMsg or Serve; readers wait for it
	start    sync.Once
	done     chan struct{} // the association ended
	doneOnce sync.Once
	closed   chan struct{} // the user closed the Conn: readers stop even if unread
	closeOne sync.Once
	eof      chan struct{} // the association ended and every reader has delivered
	readers  sync.WaitGroup
	finished bool // under mu: no new readers after the association ended
	errMu    sync.Mutex
	err      error
	bufs     sync.Pool
}

type pionStream struct {
	s   *sctp.Stream
	low chan struct{} // signalled when buffered data falls below the threshold
}

type inbound struct {
	buf    *[]byte
	n      int
	stream uint16
	ppid   uint32
}

const inboundQueue = 256

var pionOptions = func(o *options, wire *pionWire, name string) []sctp.AssociationOption {
	opts := []sctp.AssociationOption{
		sctp.WithNetConn(wire),
		sctp.WithName(name),
		sctp.WithLoggerFactory(o.logger),
		sctp.WithEnableInterleaving(false), // M3UA peers do not speak I-DATA
		sctp.WithMaxReceiveBufferSize(uint32(o.socketBuffer)),
		sctp.WithMaxMessageSize(o.maxMessage),
	}
	if o.rtoMax > 0 {
		opts = append(opts, sctp.WithRTOMax(float64(o.rtoMax.Milliseconds())))
	}
	return opts
}

// newPionConn runs the SCTP handshake on wire as the client (Dial).
func newPionConn(ctx context.Context, kind Kind, wire *pionWire, o *options) (*pionConn, error) {
	aopts := pionOptions(o, wire, kind.String())
	copts := make([]sctp.ClientOption, len(aopts))
	for i, x := range aopts {
		copts[i] = x
	}
	a, err := sctp.ClientContext(ctx, copts...)
	if err != nil {
		_ = wire.Close()
		return nil, err
	}
	return wrapAssociation(kind, a, wire, o), nil
}

// acceptedPionConn builds the association a verified State Cookie
// describes, already established: pion's out-of-band start (SNAP) takes
// the two INITs, so pion never runs a server handshake of its own and
// holds no state for peers that have not echoed a valid cookie.
func acceptedPionConn(kind Kind, wire *pionWire, o *options, st *cookieState) (*pionConn, error) {
	local, remote := snapTokens(st, uint32(o.socketBuffer), o.streams)
	wire.peerMIS.Store(uint32(st.peerMIS()))
	wire.tags.set(st.localTag, st.peerTag)
	aopts := append(pionOptions(o, wire, kind.String()), sctp.WithSNAP(local, remote))
	copts := make([]sctp.ClientOption, len(aopts))
	for i, x := range aopts {
		copts[i] = x
	}
	a, err := sctp.ClientContext(context.Background(), copts...)
	if err != nil {
		_ = wire.Close()
		return nil, err
	}
	return wrapAssociation(kind, a, wire, o), nil
}

func wrapAssociation(kind Kind, a *sctp.Association, wire *pionWire, o *options) *pionConn {
	c := &pionConn{
		kind: kind, assoc: a, wire: wire,
		maxBuffered: o.maxBuffered, maxMessage: int(o.maxMessage),
		streams: map[uint16]*pionStream{},
		in:      make(chan inbound, inboundQueue),
		started: make(chan struct{}),
		done:    make(chan struct{}),
		closed:  make(chan struct{}),
		eof:     make(chan struct{}),
	}
	c.bufs.New = func() any { b := make([]byte, 2048); return &b }
	go c.acceptLoop()
	return c
}

func (c *pionConn) acceptLoop() {
	for {
		s, err := c.assoc.AcceptStream()
		if err != nil {
			c.fail(err)
			return
		}
		c.mu.Lock()
		if _, ok := c.streams[s.StreamIdentifier()]; !ok {
			c.addStreamLocked(s)
		}
		c.mu.Unlock()
	}
}

// addStreamLocked registers s and starts its reader. Caller holds c.mu.
func (c *pionConn) addStreamLocked(s *sctp.Stream) *pionStream {
	ps := &pionStream{s: s, low: make(chan struct{}, 1)}
	s.SetBufferedAmountLowThreshold(c.maxBuffered / 2)
	s.OnBufferedAmountLow(func() {
		select {
		case ps.low <- struct{}{}:
		default:
		}
	})
	c.streams[s.StreamIdentifier()] = ps
	if id := s.StreamIdentifier(); int(id) < len(c.fast) {
		c.fast[id].Store(ps)
	}
	if !c.finished {
		c.readers.Add(1)
		go c.readStream(s)
	}
	return ps
}

func (c *pionConn) readStream(s *sctp.Stream) {
	defer c.readers.Done()
	select {
	case <-c.started: // delivery mode (handler or ReadMsg) is fixed now
	case <-c.closed:
		return
	}
	scratch := make([]byte, c.maxMessage)
	for {
		n, ppi, err := s.ReadSCTP(scratch)
		if err != nil {
			if !errors.Is(err, io.ErrShortBuffer) {
				c.fail(err)
				return
			}
			continue // cannot happen: scratch is MaxMessageSize
		}
		if c.handler != nil {
			c.handler(scratch[:n], s.StreamIdentifier(), uint32(ppi))
			continue
		}
		bp := c.bufs.Get().(*[]byte)
		if cap(*bp) < n {
			b := make([]byte, n)
			bp = &b
		}
		*bp = append((*bp)[:0], scratch[:n]...)
		select {
		case c.in <- inbound{buf: bp, n: n, stream: s.StreamIdentifier(), ppid: uint32(ppi)}:
		case <-c.closed:
			return
		}
	}
}

func (c *pionConn) fail(err error) {
	if errors.Is(err, io.EOF) || err == nil {
		err = ErrClosed
	}
	c.errMu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.errMu.Unlock()
	c.doneOnce.Do(func() {
		close(c.done)
		// Messages pion had before the end are still read out of its
		// queues; eof waits for every reader to deliver them.
		go func() {
			c.mu.Lock()
			c.finished = true
			c.mu.Unlock()
			c.readers.Wait()
			close(c.eof)
		}()
	})
}

func (c *pionConn) closeReaders() {
	c.closeOne.Do(func() { close(c.closed) })
}

func (c *pionConn) closeErr() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	if c.err == nil {
		return ErrClosed
	}
	return c.err
}

// Serve calls h from the per-stream readers (one goroutine per stream, so
// a stream's messages are handled in order; different streams run
// concurrently). b is valid only during the call. It saves the hand-off to
// a ReadMsg goroutine. Serve returns when the association ends.
func (c *pionConn) Serve(h func(b []byte, stream uint16, ppid uint32)) error {
	c.start.Do(func() {
		c.handler = h
		close(c.started)
	})
	<-c.eof
	return c.closeErr()
}

func (c *pionConn) ReadMsg(b []byte) (int, uint16, uint32, error) {
	c.start.Do(func() { close(c.started) })
	var m inbound
	select {
	case m = <-c.in:
	default:
		select {
		case m = <-c.in:
		case <-c.eof:
			// Deliver what was queued before the association ended.
			select {
			case m = <-c.in:
			default:
				return 0, 0, 0, c.closeErr()
			}
		}
	}
	n := copy(b, (*m.buf)[:m.n])
	if cap(*m.buf) <= 4096 {
		c.bufs.Put(m.buf)
	}
	if n < m.n {
		return n, m.stream, m.ppid, ErrShortBuffer
	}
	return n, m.stream, m.ppid, nil
}

func (c *pionConn) stream(id uint16) (*pionStream, error) {
	if int(id) < len(c.fast) {
		if ps := c.fast[id].Load(); ps != nil {
			return ps, nil
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.streams[id]; ok {
		return ps, nil
	}
	s, err := c.assoc.OpenStream(id, sctp.PayloadProtocolIdentifier(PPIDM3UA))
	if err != nil {
		return nil, err
	}
	return c.addStreamLocked(s), nil
}

func (c *pionConn) WriteMsg(b []byte, stream uint16, ppid uint32) error {
	if stream >= c.OutboundStreams() {
		return ErrStreamNumber
	}
	ps, err := c.stream(stream)
	if err != nil {
		return err
	}
	// Backpressure: pion queues without limit when writes do not block.
	for ps.s.BufferedAmount() > c.maxBuffered {
		select {
		case <-ps.low:
		case <-c.done:
			return c.closeErr()
		}
	}
	if _, err := ps.s.WriteSCTP(b, sctp.PayloadProtocolIdentifier(ppid)); err != nil {
		return err
	}
	return nil
}

func (c *pionConn) OutboundStreams() uint16    { return c.wire.outboundStreams() }
func (c *pionConn) LocalAddr() netip.AddrPort  { return c.wire.local }
func (c *pionConn) RemoteAddr() netip.AddrPort { return c.wire.remote }
func (c *pionConn) Kind() Kind                 { return c.kind }

func (c *pionConn) Shutdown(ctx context.Context) error {
	err := c.assoc.Shutdown(ctx)
	c.fail(ErrClosed)
	c.closeReaders()
	_ = c.assoc.Close()
	return err
}

func (c *pionConn) Close() error {
	c.fail(ErrClosed)
	c.closeReaders()
	c.assoc.Abort("closed by user")
	return c.assoc.Close()
}
