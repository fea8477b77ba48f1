package host

import (
	"bufio"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
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

	out        *sendQueue
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
	// pending counts this host's requests submitted whose answer has not
	// yet been written to it (its share, see Config.MaxPending): counting
	// until the answer is written keeps a host's own answers from filling
	// its send queue too. drained is signalled when answers are written.
	pending int
	drained chan struct{}
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
		out: newSendQueue(s.cfg.QueueSize), closed: make(chan struct{}), writerDone: make(chan struct{}),
		calls: map[stack.CallID]struct{}{}, drained: make(chan struct{}, 1),
	}
}

// answered counts n of the host's requests answered (s.mu held).
func (c *conn) answered(n int) {
	c.pending -= n
	select {
	case c.drained <- struct{}{}:
	default:
	}
}

// waitShare holds the reader while the host has limit requests waiting:
// back-pressure on this host alone. False means the connection ended.
func (c *conn) waitShare(limit int) bool {
	for {
		c.s.mu.Lock()
		n := c.pending
		c.s.mu.Unlock()
		if n < limit {
			return true
		}
		select {
		case <-c.drained:
		case <-c.closed:
			return false
		}
	}
}

// submit hands one of the host's requests (registered as pending under tag)
// to the stack, and forgets it if the stack never took it.
func (c *conn) submit(r stack.Request, tag uint64) {
	if err := c.s.submit(r); err != nil {
		c.s.mu.Lock()
		if _, ok := c.s.pending[tag]; ok {
			delete(c.s.pending, tag)
			c.answered(1)
		}
		c.s.mu.Unlock()
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
func (c *conn) send(typ string, line []byte) bool { return c.enqueue(typ, line, false) }

// sendAnswer queues the ack or nak of a pending request: once the writer has
// written it, the request leaves the host's share.
func (c *conn) sendAnswer(typ string, line []byte) bool { return c.enqueue(typ, line, true) }

func (c *conn) enqueue(typ string, line []byte, answer bool) bool {
	select {
	case <-c.closed:
		return false
	default:
	}
	if c.out.push(line, answer) {
		c.s.metrics.MessagesSent.Add(1)
		c.s.metrics.events.add(typ)
		return true
	}
	c.s.metrics.QueueDrops.Add(1)
	c.s.log.Warn("host send queue full: disconnecting", "conn", c.id, "app", c.app, "queue", c.s.cfg.QueueSize)
	c.fail("send queue full")
	return false
}

func (c *conn) writer() {
	defer close(c.writerDone)
	for {
		select {
		case <-c.closed:
			return
		case <-c.out.wake:
		}
		batch, answers, closing := c.out.take()
		if len(batch) > 0 && !c.write(batch) {
			c.fail("write error")
			return
		}
		c.out.recycle(batch)
		if answers > 0 {
			c.s.mu.Lock()
			c.answered(answers)
			c.s.mu.Unlock()
		}
		if closing {
			c.fail(c.pendingClose())
			return
		}
	}
}

// write sends a batch of lines through a buffer borrowed for the purpose.
func (c *conn) write(batch [][]byte) bool {
	bw := writers.Get().(*bufio.Writer)
	bw.Reset(c.nc)
	defer func() {
		bw.Reset(nil)
		writers.Put(bw)
	}()
	for _, line := range batch {
		if _, err := bw.Write(line); err != nil {
			return false
		}
	}
	return bw.Flush() == nil
}

// closeAfter queues a fatal nak and then the order to close, and waits until
// the writer has sent them (bounded: the writer stops when the conn fails).
func (c *conn) closeAfter(line []byte, reason string) {
	c.s.mu.Lock()
	c.closeReason = reason
	c.s.mu.Unlock()
	if c.send(wire.TypeNak, line) {
		c.out.closeAfterQueued()
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
			switch {
			case errors.Is(err, os.ErrDeadlineExceeded):
				// Only the hello has a deadline (hello clears it).
				s.log.Info("host connection closed: no hello in time", "conn", c.id, "remote", c.remote, "timeout", s.cfg.HelloTimeout)
				c.fail("hello timeout")
			case !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed):
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
	d, rf := decodeRequest(line, &c.s.pcs) // a pointer: boxing the value would cost an allocation a line
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
	// waiting only falls until this reader counts a request in (the writer
	// answers them), so it bounds the host's share below without a second
	// look under the lock.
	authed, waiting := c.authed, c.pending
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
		if n := waiting; n >= s.cfg.MaxPending {
			// Refused before the shared queue: the excess costs this host,
			// not the delay every host's calls are admitted by.
			s.metrics.ShareRefused.Add(1)
			c.nak(d.seq, wire.StatusOutboundCongestion, fmt.Sprintf("this host has %d requests waiting in the gateway, its share: try later", n), 0)
			// Then read on only once half its share is answered: refusing
			// as fast as the host can write would take the CPU the loop
			// needs, and waking for every answer would cost nearly as
			// much. A flooder is slowed to the rate it is answered at.
			return c.waitShare(max(1, s.cfg.MaxPending/2))
		}
		o, st := s.screen(d.out)
		if st != stack.StatusOK {
			// Refused at the edge (the work the gateway does most under
			// overload): no tag, no pending entry, no Result through the
			// sink. The nak still counts in the host's share until it is
			// written, so a flooder is slowed to the rate it is answered
			// at, as when the loop refuses.
			s.mu.Lock()
			c.pending++
			s.mu.Unlock()
			s.metrics.naks.add(uint16(st))
			c.sendAnswer(wire.TypeNak, encodeNak(d.seq, wire.Status(st), st.String(), 0))
			return true
		}
		tag := s.newTag()
		o.Tag = tag
		s.mu.Lock()
		s.pending[tag] = pending{c: c, seq: seq, typ: d.typ}
		c.pending++
		s.mu.Unlock()
		c.submit(o, tag)
	default: // alert, progress, answer, release: the call must be this host's
		// These finish calls already admitted: not refused, but a host
		// cannot queue more than its share of them either.
		if !c.waitShare(2 * s.cfg.MaxPending) {
			return false
		}
		tag := s.newTag()
		s.mu.Lock()
		owner := s.calls[d.call]
		if owner == c {
			s.pending[tag] = pending{c: c, seq: seq, typ: d.typ}
			c.pending++
		}
		s.mu.Unlock()
		if owner != c {
			c.nak(d.seq, wire.StatusUnknownCall, "no call with that handle belongs to this host", uint64(d.call))
			return true
		}
		c.submit(withTag(d.req, tag), tag)
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
	c.nc.SetReadDeadline(time.Time{}) // the hello deadline no longer applies
	s.unwait(c)
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
	waiting := c.pending
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
		"calls": own, "pending": waiting, "max_pending": s.cfg.MaxPending, "calls_total": total, "overload": ownLevel, "overload_max": max, "alarms": alarms,
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
