package loadgen

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/isupgw/isupgw/host/wire"
)

// hconn is the generator's own host API connection. host/client is the
// general client (a goroutine, a channel and two JSON decodes per request and
// event); the generator must stay cheap at tens of thousands of requests a
// second on the machine it measures, so here requests are appended to one
// buffer that a writer goroutine sends in as few writes as it can, answers
// and events are read with a small scanner, and nothing waits for an ack:
// ack and nak are matched to their request by seq and handed to a callback.
type hconn struct {
	nc net.Conn
	gw int // which of the generator's gateways (index into its addresses)

	mu      sync.Mutex
	cond    *sync.Cond // senders wait here while buf is full
	buf     []byte     // lines not yet written
	spare   []byte
	seq     uint64
	pending map[uint64]pend
	closed  bool
	wake    chan struct{}
	done    chan struct{}
	err     error
	onClose func(c *hconn, unanswered []pend)

	// onReply gets the answer of a request sent with a pending record;
	// onEvent every event line. Both run on the reader goroutine and are
	// given the connection, which may deliver before dialConn returns it.
	onReply func(c *hconn, p pend, r reply)
	onEvent func(c *hconn, e event)
}

// maxBuffered bounds the lines waiting to be written: beyond it senders wait,
// which is how a gateway that stops reading slows the generator down (and
// shows as lag).
const maxBuffered = 4 << 20

// pend is what a request needs to be recognised when its answer comes.
type pend struct {
	kind  uint8 // reqOutseize, reqAnswer, reqHello
	phase int32
	sent  time.Time
	// An outseize's call number (its destination and digits) and the
	// gateways it was refused by as standby (a bit each), to send it on.
	k     uint64
	tried uint64
}

const (
	reqHello uint8 = iota + 1
	reqOutseize
	reqAlert
	reqAnswer
)

// reply is an ack or nak.
type reply struct {
	ok     bool
	status wire.Status
	call   uint64
	hello  []byte // the hello's ack line
}

// event is a line from the gateway that is not an answer.
type event struct {
	typ    string // incoming, progress, answered, released, alarm, ...
	call   uint64
	cause  uint8
	acl    uint8
	remote bool
	// alarm and alarm_cleared: the number and the data's dpc
	number uint16
	dpc    uint32
	hasDPC bool
}

// dialConn connects, says hello and starts the reader and writer.
func dialConn(ctx context.Context, gw int, network, address, token, app string, incoming bool, onReply func(*hconn, pend, reply), onEvent func(*hconn, event)) (*hconn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	c := &hconn{nc: nc, gw: gw, pending: map[uint64]pend{}, wake: make(chan struct{}, 1), done: make(chan struct{}), onEvent: onEvent}
	c.cond = sync.NewCond(&c.mu)
	hello := make(chan reply, 1)
	c.onReply = func(c *hconn, p pend, r reply) {
		if p.kind == reqHello {
			hello <- r
			return
		}
		onReply(c, p, r)
	}
	go c.reader()
	go c.writer()
	tok, _ := json.Marshal(token)
	ap, _ := json.Marshal(app)
	c.send(pend{kind: reqHello}, func(b []byte, seq uint64) []byte {
		b = fmt.Appendf(b, `{"type":"hello","seq":%d,"version":%d,"token":%s,"app":%s,"incoming":%v}`, seq, wire.Version, tok, ap, incoming)
		return append(b, '\n')
	})
	select {
	case r := <-hello:
		if !r.ok {
			c.close()
			return nil, fmt.Errorf("hello refused: %s", r.status)
		}
		return c, nil
	case <-c.done:
		return nil, fmt.Errorf("hello: %w", c.err)
	case <-ctx.Done():
		c.close()
		return nil, ctx.Err()
	}
}

var errClosed = errors.New("connection closed")

// send appends one request line built by f (given the buffer and the seq);
// p, when its kind is set, is kept until the answer comes. It waits while
// the buffer is full and returns false once the connection is closed.
func (c *hconn) send(p pend, f func(b []byte, seq uint64) []byte) bool {
	c.mu.Lock()
	for len(c.buf) > maxBuffered && !c.closed {
		c.cond.Wait()
	}
	if c.closed {
		c.mu.Unlock()
		return false
	}
	c.seq++
	if p.kind != 0 {
		c.pending[c.seq] = p
	}
	c.buf = f(c.buf, c.seq)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return true
}

func (c *hconn) writer() {
	for {
		select {
		case <-c.done:
			return
		case <-c.wake:
		}
		c.mu.Lock()
		b := c.buf
		c.buf, c.spare = c.spare[:0], nil
		c.cond.Broadcast()
		c.mu.Unlock()
		if len(b) == 0 {
			c.mu.Lock()
			c.spare = b
			c.mu.Unlock()
			continue
		}
		if _, err := c.nc.Write(b); err != nil {
			c.fail(err)
			return
		}
		c.mu.Lock()
		if c.spare == nil && cap(b) <= maxBuffered*2 {
			c.spare = b[:0]
		}
		c.mu.Unlock()
	}
}

func (c *hconn) fail(err error) {
	c.mu.Lock()
	first := !c.closed
	var f func(*hconn, []pend)
	var unanswered []pend
	if first {
		c.closed = true
		c.err = err
		close(c.done)
		c.cond.Broadcast()
		f, unanswered = c.onClose, c.takeOutseizesLocked()
	}
	c.mu.Unlock()
	c.nc.Close()
	if f != nil {
		f(c, unanswered)
	}
}

// takeOutseizesLocked removes and returns the outseizes still waiting for
// their answer.
func (c *hconn) takeOutseizesLocked() []pend {
	var out []pend
	for seq, p := range c.pending {
		if p.kind == reqOutseize {
			out = append(out, p)
			delete(c.pending, seq)
		}
	}
	return out
}

// setOnClose registers what runs once when the connection ends, with the
// outseizes it never answered; at once if it has ended already.
func (c *hconn) setOnClose(f func(c *hconn, unanswered []pend)) {
	c.mu.Lock()
	if !c.closed {
		c.onClose = f
		c.mu.Unlock()
		return
	}
	unanswered := c.takeOutseizesLocked()
	c.mu.Unlock()
	f(c, unanswered)
}

func (c *hconn) close() { c.fail(errClosed) }

func (c *hconn) reader() {
	br := bufio.NewReaderSize(c.nc, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				for errors.Is(err, bufio.ErrBufferFull) { // a long line: skip it
					_, err = br.ReadSlice('\n')
				}
				continue
			}
			c.fail(err)
			return
		}
		var f fields
		if scanLine(line, &f) != nil {
			continue
		}
		switch f.typ {
		case wire.TypeAck, wire.TypeNak:
			if !f.hasSeq {
				continue
			}
			c.mu.Lock()
			p, ok := c.pending[f.seq]
			delete(c.pending, f.seq)
			c.mu.Unlock()
			if ok {
				r := reply{ok: f.typ == wire.TypeAck, status: wire.Status(f.status), call: f.call}
				if p.kind == reqHello {
					r.hello = append([]byte(nil), line...)
				}
				c.onReply(c, p, r)
			}
		default:
			e := event{typ: f.typ, call: f.call, cause: uint8(f.cause), acl: uint8(f.acl), remote: f.remote, number: uint16(f.number)}
			if (f.typ == wire.TypeAlarm || f.typ == wire.TypeAlarmCleared) && len(f.data) > 0 {
				var d struct {
					DPC *uint32 `json:"dpc"`
				}
				if json.Unmarshal(f.data, &d) == nil && d.DPC != nil {
					e.dpc, e.hasDPC = *d.DPC, true
				}
			}
			c.onEvent(c, e)
		}
	}
}

// Request lines. Numbers are made by patterns of digits only, so they need
// no escaping; route names are quoted by encoding/json once.

func appendOutseize(b []byte, seq uint64, dpc uint32, routeJSON []byte, called, calling Pattern, n uint64) []byte {
	b = append(b, `{"type":"outseize","seq":`...)
	b = strconv.AppendUint(b, seq, 10)
	if routeJSON != nil {
		b = append(b, `,"route":`...)
		b = append(b, routeJSON...)
	} else {
		b = append(b, `,"dpc":`...)
		b = strconv.AppendUint(b, uint64(dpc), 10)
	}
	b = append(b, `,"called":"`...)
	b = called.Append(b, n)
	b = append(b, '"')
	if !calling.Empty() {
		b = append(b, `,"calling":"`...)
		b = calling.Append(b, n)
		b = append(b, '"')
	}
	return append(b, "}\n"...)
}

func appendCallRequest(b []byte, typ string, seq, call uint64, cause uint8) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","seq":`...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `,"call":`...)
	b = strconv.AppendUint(b, call, 10)
	if cause != 0 {
		b = append(b, `,"cause":`...)
		b = strconv.AppendUint(b, uint64(cause), 10)
	}
	return append(b, "}\n"...)
}

// fields are the members of a gateway line the generator reads.
type fields struct {
	typ          string
	seq          uint64
	hasSeq       bool
	status, call uint64
	cause, acl   uint64
	remote       bool
	number       uint64 // alarm number
	data         []byte // an alarm's data object, raw (valid while the line is)
}

var errSyntax = errors.New("not a flat JSON object")

// scanLine reads the top-level members type, seq, status, call, cause, acl
// and remote of one JSON object line and skips every other value (strings,
// numbers, objects, arrays). It does not validate what it skips beyond
// keeping strings and brackets balanced.
func scanLine(b []byte, f *fields) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errSyntax
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) {
			return errSyntax
		}
		if b[i] == '}' {
			return nil
		}
		if b[i] == ',' {
			i++
			continue
		}
		if b[i] != '"' {
			return errSyntax
		}
		ks := i + 1
		ke := ks
		for ke < len(b) && b[ke] != '"' {
			if b[ke] == '\\' {
				ke++
			}
			ke++
		}
		if ke >= len(b) {
			return errSyntax
		}
		key := b[ks:ke]
		i = skipSpace(b, ke+1)
		if i >= len(b) || b[i] != ':' {
			return errSyntax
		}
		i = skipSpace(b, i+1)
		vs := i
		var err error
		if i, err = skipValue(b, i); err != nil {
			return err
		}
		v := b[vs:i]
		switch string(key) {
		case "type":
			if len(v) >= 2 && v[0] == '"' {
				f.typ = internType(v[1 : len(v)-1])
			}
		case "seq":
			f.seq, f.hasSeq = parseUint(v)
		case "status":
			f.status, _ = parseUint(v)
		case "call":
			f.call, _ = parseUint(v)
		case "cause":
			f.cause, _ = parseUint(v)
		case "acl":
			f.acl, _ = parseUint(v)
		case "remote":
			f.remote = string(v) == "true"
		case "number":
			f.number, _ = parseUint(v)
		case "data":
			f.data = v
		}
	}
}

// internType returns the type names without allocating for the known ones.
func internType(v []byte) string {
	for _, t := range [...]string{wire.TypeAck, wire.TypeNak, wire.TypeProgress, wire.TypeAnswered, wire.TypeReleased, wire.TypeIncoming, wire.TypeAlarm, wire.TypeAlarmCleared} {
		if string(v) == t {
			return t
		}
	}
	return string(v)
}

func parseUint(v []byte) (uint64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var n uint64
	for _, ch := range v {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		n = n*10 + uint64(ch-'0')
	}
	return n, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipValue returns the index just past the value starting at i.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return i, errSyntax
	}
	switch b[i] {
	case '"':
		i++
		for i < len(b) && b[i] != '"' {
			if b[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(b) {
			return i, errSyntax
		}
		return i + 1, nil
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				var err error
				if i, err = skipValue(b, i); err != nil {
					return i, err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return i, errSyntax
	default:
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ' ' && b[i] != '\n' && b[i] != '\r' && b[i] != '\t' {
			i++
		}
		return i, nil
	}
}
