package host

import (
	"bufio"
	"context"
	"crypto/subtle"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/isup/stack"
)

// conn is one host connection: a reader goroutine that turns lines into
// requests, and a writer goroutine that drains the bounded send queue.
type conn struct {
	s      *Server
	nc     net.Conn
	id     uint64
	remote string
	br     *bufio.Reader
	buf    []byte

	out        chan []byte // nil entry: flush, then close (after a fatal nak)
	closed     chan struct{}
	closeOnce  sync.Once
	why        string
	writerDone chan struct{}

	// Under s.mu.
	authed   bool
	app      string
	incoming bool
	removed  bool
	// closeReason is the reason of a close ordered after a fatal nak.
	closeReason string
	calls       map[stack.CallID]struct{}
	// Under s.ovMu.
	overload int
}

func newConn(s *Server, nc net.Conn) *conn {
	remote := nc.RemoteAddr().String()
	if remote == "" || remote == "@" {
		remote = "unix:" + nc.LocalAddr().String()
	}
	return &conn{
		s: s, nc: nc, id: s.ids.Add(1), remote: remote,
		br:  bufio.NewReaderSize(nc, 16<<10),
		out: make(chan []byte, s.cfg.QueueSize), closed: make(chan struct{}), writerDone: make(chan struct{}),
		calls: map[stack.CallID]struct{}{},
	}
}

// fail closes the connection once, remembering the first reason. It never
// blocks, so the stack's sink may call it.
func (c *conn) fail(reason string) {
	c.closeOnce.Do(func() {
		c.why = reason
		c.s.metrics.disconnects.add(reason) // before the close, so a host that sees it can see the count
		close(c.closed)
		c.nc.Close()
	})
}

func (c *conn) reason() string {
	select {
	case <-c.closed:
		return c.why
	default:
		return "unknown"
	}
}

// send queues a line without waiting. A full queue disconnects the host: its
// reader goroutine then releases its calls.
func (c *conn) send(typ string, line []byte) bool {
	select {
	case <-c.closed:
		return false
	default:
	}
	select {
	case c.out <- line:
		c.s.metrics.MessagesSent.Add(1)
		c.s.metrics.events.add(typ)
		return true
	default:
		c.s.metrics.QueueDrops.Add(1)
		c.s.log.Warn("host send queue full: disconnecting", "conn", c.id, "app", c.app, "queue", cap(c.out))
		c.fail("send queue full")
		return false
	}
}

func (c *conn) writer() {
	defer close(c.writerDone)
	bw := bufio.NewWriterSize(c.nc, 32<<10)
	for {
		var line []byte
		select {
		case <-c.closed:
			return
		case line = <-c.out:
		}
		for {
			if line == nil { // flush and close
				bw.Flush()
				c.fail(c.pendingClose())
				return
			}
			if _, err := bw.Write(line); err != nil {
				c.fail("write error")
				return
			}
			select {
			case line = <-c.out:
				continue
			default:
			}
			break
		}
		if err := bw.Flush(); err != nil {
			c.fail("write error")
			return
		}
	}
}

// closeAfter queues a fatal nak and then the order to close, and waits until
// the writer has sent them (bounded: the writer stops when the conn fails).
func (c *conn) closeAfter(line []byte, reason string) {
	c.s.mu.Lock()
	c.closeReason = reason
	c.s.mu.Unlock()
	if c.send(wire.TypeNak, line) {
		select {
		case c.out <- nil:
		default:
			c.fail(reason)
		}
	}
	select {
	case <-c.writerDone:
	case <-time.After(5 * time.Second):
	}
	c.fail(reason)
}

func (c *conn) pendingClose() string {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.closeReason
}

// readLine returns the next line without its newline (and a trailing CR).
// A line longer than wire.MaxLine is consumed to its newline and reported as
// tooLong; the buffer never holds more than MaxLine+1 octets.
func (c *conn) readLine() (line []byte, tooLong bool, err error) {
	c.buf = c.buf[:0]
	for {
		frag, err := c.br.ReadSlice('\n')
		if !tooLong {
			if len(c.buf)+len(frag) > wire.MaxLine+2 { // content, CR, LF
				tooLong = true
				c.buf = c.buf[:0]
			} else {
				c.buf = append(c.buf, frag...)
			}
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(c.buf) > 0 && errors.Is(err, io.EOF) && !tooLong {
			break // a last line without its newline
		}
		return nil, false, err
	}
	b := c.buf
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	if !tooLong && len(b) > wire.MaxLine {
		tooLong = true
	}
	return b, tooLong, nil
}

func (c *conn) reader() {
	s := c.s
	defer s.remove(c)
	defer c.fail("closed by host")
	for {
		line, tooLong, err := c.readLine()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				c.fail("read error")
			}
			return
		}
		if tooLong {
			s.metrics.LinesTooLong.Add(1)
			s.metrics.requests.add("invalid")
			c.nak(nil, wire.StatusLineTooLong, "line longer than 65536 octets discarded", 0)
			continue
		}
		if len(line) == 0 || isBlank(line) {
			continue // blank lines are not requests (comfortable by hand)
		}
		if !c.handle(line) {
			return
		}
	}
}

func isBlank(b []byte) bool {
	for _, ch := range b {
		if ch != ' ' && ch != '\t' && ch != '\r' {
			return false
		}
	}
	return true
}

func (c *conn) nak(seq *uint64, st wire.Status, detail string, call uint64) {
	c.s.metrics.naks.add(uint16(st))
	c.send(wire.TypeNak, encodeNak(seq, st, detail, call))
}

// handle carries out one request line; false ends the connection.
func (c *conn) handle(line []byte) bool {
	s := c.s
	d, rf := decodeRequest(line)
	if rf != nil {
		if knownType(d.typ) {
			s.metrics.requests.add(d.typ)
		} else {
			s.metrics.requests.add("invalid")
		}
		c.nak(d.seq, rf.status, rf.detail, uint64(d.call))
		return true
	}
	s.metrics.requests.add(d.typ)
	seq := *d.seq
	s.mu.Lock()
	authed := c.authed
	s.mu.Unlock()
	if d.typ == wire.TypeHello {
		return c.hello(d)
	}
	if !authed {
		c.nak(d.seq, wire.StatusNotAuthenticated, "send hello first", uint64(d.call))
		return true
	}
	switch d.typ {
	case wire.TypeOverload:
		s.setOverload(c, d.level)
		c.ack(seq, nil)
	case wire.TypeStatus:
		c.ack(seq, c.status())
	case wire.TypeBlock, wire.TypeUnblock, wire.TypeReset, wire.TypeQuery, wire.TypeCircuits:
		c.maintenance(d.typ, seq, line) // maintenance.go
	case wire.TypeTrace:
		c.trace(seq, line) // trace.go
	case wire.TypeOutseize:
		tag := s.newTag()
		o := d.req.(stack.Outseize)
		o.Tag = tag
		s.mu.Lock()
		s.pending[tag] = pending{c: c, seq: seq, typ: d.typ}
		s.mu.Unlock()
		s.submit(o)
	default: // alert, progress, answer, release: the call must be this host's
		tag := s.newTag()
		s.mu.Lock()
		owner := s.calls[d.call]
		if owner == c {
			s.pending[tag] = pending{c: c, seq: seq, typ: d.typ}
		}
		s.mu.Unlock()
		if owner != c {
			c.nak(d.seq, wire.StatusUnknownCall, "no call with that handle belongs to this host", uint64(d.call))
			return true
		}
		s.submit(withTag(d.req, tag))
	}
	return true
}

func withTag(r stack.Request, tag uint64) stack.Request {
	switch x := r.(type) {
	case stack.Alert:
		x.Tag = tag
		return x
	case stack.Progress:
		x.Tag = tag
		return x
	case stack.Answer:
		x.Tag = tag
		return x
	case stack.Release:
		x.Tag = tag
		return x
	}
	return r
}

func (c *conn) ack(seq uint64, data map[string]any) {
	w := newObj(wire.TypeAck, 96)
	w.uint("seq", seq)
	w.uint("status", uint64(wire.StatusOK))
	w.str("name", wire.StatusOK.Name())
	if data != nil {
		w.any("data", data)
	}
	c.send(wire.TypeAck, w.end())
}

func (c *conn) hello(d decoded) bool {
	s := c.s
	seq := *d.seq
	s.mu.Lock()
	authed := c.authed
	s.mu.Unlock()
	if authed {
		c.nak(d.seq, wire.StatusAlreadyHello, "this connection has completed its hello", 0)
		return true
	}
	if d.version != wire.Version {
		c.nak(d.seq, wire.StatusVersionUnsupported, "this gateway speaks protocol version 1", 0)
		return true
	}
	if !s.cfg.NoAuth && subtle.ConstantTimeCompare([]byte(d.token), []byte(s.cfg.Token)) != 1 {
		s.metrics.naks.add(uint16(wire.StatusBadToken))
		s.log.Warn("host hello with a wrong token", "conn", c.id, "remote", c.remote, "app", d.app)
		c.closeAfter(encodeNak(d.seq, wire.StatusBadToken, "wrong token: closing the connection", 0), "bad token")
		return false
	}
	s.mu.Lock()
	if len(s.hosts) >= s.cfg.MaxHosts {
		s.mu.Unlock()
		s.metrics.naks.add(uint16(wire.StatusTooManyHosts))
		c.closeAfter(encodeNak(d.seq, wire.StatusTooManyHosts, "too many hosts connected: closing the connection", 0), "too many hosts")
		return false
	}
	c.authed, c.app, c.incoming = true, d.app, d.incoming
	s.hosts = append(s.hosts, c)
	alarms := make([]Alarm, 0, len(s.alarms))
	for _, a := range s.alarms {
		alarms = append(alarms, a)
	}
	s.mu.Unlock()
	s.metrics.HostsAuthenticated.Add(1)
	s.log.Info("host hello", "conn", c.id, "app", d.app, "incoming", d.incoming, "remote", c.remote)
	c.ack(seq, map[string]any{"version": wire.Version, "host": c.id, "overload": s.OverloadLevel()})
	for _, a := range alarms {
		if c.send(wire.TypeAlarm, encodeAlarm(a)) {
			s.metrics.AlarmsSent.Add(1)
		}
	}
	return true
}

// status answers the status request: the host's own view and the gateway's.
func (c *conn) status() map[string]any {
	s := c.s
	s.mu.Lock()
	own := len(c.calls)
	total := len(s.calls)
	hosts := len(s.hosts)
	alarms := make([]map[string]any, 0, len(s.alarms))
	for _, a := range s.alarms {
		alarms = append(alarms, map[string]any{"number": a.Number, "severity": a.Severity, "text": a.Text, "data": a.Data})
	}
	s.mu.Unlock()
	s.ovMu.Lock()
	ownLevel, max := c.overload, s.ovMax
	s.ovMu.Unlock()
	data := map[string]any{
		"version": wire.Version, "host": c.id, "app": c.app, "hosts": hosts,
		"calls": own, "calls_total": total, "overload": ownLevel, "overload_max": max, "alarms": alarms,
	}
	if ref := s.stack.Load(); ref != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		snap, err := ref.s.Inspect(ctx)
		cancel()
		if err == nil {
			data["circuits"] = snap.CircuitsByState
			data["stack_calls"] = snap.Calls
		}
	}
	return data
}
