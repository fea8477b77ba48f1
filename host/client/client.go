// Package client is a Go client for the gateway's host API (docs/host-api.md).
//
// Dial connects and says hello; the request methods (Outseize, Alert, Answer,
// Release, ...) send one request and wait for its ack or nak; everything else
// the gateway sends (incoming calls, progress, answers, releases, alarms)
// arrives on Events, in the order the gateway sent it.
//
// Events must be drained by the application, in its own goroutine: the client
// reads the socket in one goroutine, and while Events is full it stops reading,
// so acks wait too, and a gateway whose queue for this host fills up
// disconnects it.
package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/isupgw/isupgw/host/wire"
)

// Config is what the client says in its hello.
type Config struct {
	App      string // application name, used by the gateway's incoming rules
	Token    string
	Incoming bool // offer me incoming calls
	// EventBuffer is the capacity of Events (default 1024).
	EventBuffer int
	// NoFields leaves the Fields maps of Incoming, Progress and Answered nil:
	// building them decodes every such line a second time, which a host that
	// does not read them (a load generator) need not pay for.
	NoFields bool
}

// Nak is a refused request.
type Nak struct {
	Status wire.Status
	Name   string
	Detail string
	Call   uint64
}

func (n *Nak) Error() string {
	return fmt.Sprintf("nak 0x%04X %s: %s", uint16(n.Status), n.Name, n.Detail)
}

// ErrClosed is returned by requests after the connection ended.
var ErrClosed = errors.New("client: connection closed")

// Event is something the gateway sent on its own: *Incoming, *Progress,
// *Answered, *Released, *Alarm, or *Unsolicited for anything else.
type Event interface{ event() }

// Incoming offers a call (Request for Service with Data).
type Incoming struct {
	Call       uint64
	OPC        uint32
	Route      string
	CIC        uint16
	Called     string
	CalledNAI  uint8
	Calling    string
	CallingNAI uint8
	CPC        uint8
	Params     []wire.Param
	Fields     map[string]any // every field of the line, as decoded JSON
}

// Progress reports a backward ISUP message on an outgoing call (ACM, CPG) or
// SUS/RES and the like.
type Progress struct {
	Call    uint64
	Message string
	Fields  map[string]any
}

// Answered reports ANM or CON on an outgoing call.
type Answered struct {
	Call    uint64
	Message string
	Fields  map[string]any
}

// Released ends a call (Channel Released with Data).
type Released struct {
	Call     uint64
	Cause    uint8
	Location uint8
	ACL      uint8
	DPC      uint32
	CIC      uint16
	Remote   bool
	Reason   string
}

// Alarm is an alarm or, with Cleared, an alarm_cleared.
type Alarm struct {
	Number   uint16
	Severity uint8
	Cleared  bool
	Text     string
	Data     map[string]any
}

// Unsolicited is a line the client has no type for, or a nak no request is
// waiting for (for example line_too_long, which cannot echo a seq).
type Unsolicited struct {
	Message wire.Message
	Line    []byte
}

func (*Incoming) event()    {}
func (*Progress) event()    {}
func (*Answered) event()    {}
func (*Released) event()    {}
func (*Alarm) event()       {}
func (*Unsolicited) event() {}

// Client is one connection to the gateway.
type Client struct {
	nc      net.Conn
	wmu     sync.Mutex
	seq     atomic.Uint64
	mu      sync.Mutex
	waiting map[uint64]chan wire.Message
	events  chan Event
	fields  func([]byte) map[string]any
	done    chan struct{}
	err     error
	// Hello is the data of the hello's ack (version, host id, overload).
	Hello map[string]any
}

// Dial connects ("tcp" or "unix") and says hello.
func Dial(ctx context.Context, network, address string, cfg Config) (*Client, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	c, err := New(ctx, nc, cfg)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

// New says hello on an open connection and starts reading it.
func New(ctx context.Context, nc net.Conn, cfg Config) (*Client, error) {
	if cfg.EventBuffer <= 0 {
		cfg.EventBuffer = 1024
	}
	c := &Client{nc: nc, waiting: map[uint64]chan wire.Message{}, events: make(chan Event, cfg.EventBuffer), done: make(chan struct{}), fields: fields}
	if cfg.NoFields {
		c.fields = func([]byte) map[string]any { return nil }
	}
	go c.read()
	ack, err := c.Do(ctx, map[string]any{"type": wire.TypeHello, "version": wire.Version, "app": cfg.App, "token": cfg.Token, "incoming": cfg.Incoming})
	if err != nil {
		c.Close()
		return nil, err
	}
	c.Hello = ack.Data
	return c, nil
}

// Events delivers what the gateway sends on its own; it is closed when the
// connection ends.
func (c *Client) Events() <-chan Event { return c.events }

// Done is closed when the connection has ended; Err then says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err is the reason the connection ended (nil while it is open).
func (c *Client) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// Close ends the connection.
func (c *Client) Close() error { return c.nc.Close() }

// Do sends a request (any JSON object; "seq" is set by the client) and waits
// for its ack, returned as a message, or its nak, returned as a *Nak error.
func (c *Client) Do(ctx context.Context, req any) (wire.Message, error) {
	seq := c.seq.Add(1)
	line, err := encodeRequest(req, seq)
	if err != nil {
		return wire.Message{}, err
	}
	ch := make(chan wire.Message, 1)
	c.mu.Lock()
	select {
	case <-c.done:
		c.mu.Unlock()
		return wire.Message{}, ErrClosed
	default:
	}
	c.waiting[seq] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiting, seq)
		c.mu.Unlock()
	}()
	c.wmu.Lock()
	_, err = c.nc.Write(line)
	c.wmu.Unlock()
	if err != nil {
		return wire.Message{}, err
	}
	answer := func(m wire.Message) (wire.Message, error) {
		if m.Type == wire.TypeNak {
			return m, &Nak{Status: m.Status, Name: m.Name, Detail: m.Detail, Call: m.Call}
		}
		return m, nil
	}
	select {
	case m := <-ch:
		return answer(m)
	case <-c.done:
		// The answer may have come just before the connection closed (a
		// hello refused with 0x0116 is answered, then closed): the reader
		// delivered it before closing done, and select picks at random.
		select {
		case m := <-ch:
			return answer(m)
		default:
			return wire.Message{}, ErrClosed
		}
	case <-ctx.Done():
		return wire.Message{}, ctx.Err()
	}
}

// encodeRequest marshals req and puts "seq" into it.
func encodeRequest(req any, seq uint64) ([]byte, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, errors.New("client: a request must be a JSON object")
	}
	out := fmt.Appendf(nil, `{"seq":%d`, seq)
	if len(b) > 2 {
		out = append(out, ',')
	}
	out = append(out, b[1:]...)
	return append(out, '\n'), nil
}

func (c *Client) read() {
	defer close(c.events)
	sc := bufio.NewScanner(c.nc)
	sc.Buffer(make([]byte, 0, 4096), wire.MaxLine+2)
	for sc.Scan() {
		line := sc.Bytes()
		var m wire.Message
		if err := json.Unmarshal(line, &m); err != nil {
			c.events <- &Unsolicited{Line: append([]byte(nil), line...)}
			continue
		}
		if (m.Type == wire.TypeAck || m.Type == wire.TypeNak) && m.Seq != nil {
			c.mu.Lock()
			ch := c.waiting[*m.Seq]
			c.mu.Unlock()
			if ch != nil {
				ch <- m
				continue
			}
		}
		c.events <- toEvent(m, line, c.fields)
	}
	c.mu.Lock()
	c.err = sc.Err()
	if c.err == nil {
		c.err = ErrClosed
	}
	close(c.done)
	c.mu.Unlock()
}

func fields(line []byte) map[string]any {
	var f map[string]any
	_ = json.Unmarshal(line, &f)
	return f
}

func toEvent(m wire.Message, line []byte, fields func([]byte) map[string]any) Event {
	switch m.Type {
	case wire.TypeIncoming:
		return &Incoming{Call: m.Call, OPC: m.OPC, Route: m.Route, CIC: m.CIC, Called: m.Called, CalledNAI: m.CalledNAI,
			Calling: m.Calling, CallingNAI: m.CallingNAI, CPC: m.CPC, Params: m.Params, Fields: fields(line)}
	case wire.TypeProgress:
		return &Progress{Call: m.Call, Message: m.Message, Fields: fields(line)}
	case wire.TypeAnswered:
		return &Answered{Call: m.Call, Message: m.Message, Fields: fields(line)}
	case wire.TypeReleased:
		return &Released{Call: m.Call, Cause: m.Cause, Location: m.Location, ACL: m.ACL, DPC: m.DPC, CIC: m.CIC, Remote: m.Remote, Reason: m.Reason}
	case wire.TypeAlarm, wire.TypeAlarmCleared:
		return &Alarm{Number: m.Number, Severity: m.Severity, Cleared: m.Type == wire.TypeAlarmCleared, Text: m.Text, Data: m.Data}
	}
	return &Unsolicited{Message: m, Line: append([]byte(nil), line...)}
}

// Outseize asks for an outgoing call (an IAM). Unset pointer fields take the
// gateway's defaults.
type Outseize struct {
	DPC          uint32       `json:"dpc,omitempty"`
	Route        string       `json:"route,omitempty"`
	CIC          *int         `json:"cic,omitempty"`
	Called       string       `json:"called"`
	CalledNAI    *uint8       `json:"called_nai,omitempty"`
	CalledNPI    *uint8       `json:"called_npi,omitempty"`
	Calling      string       `json:"calling,omitempty"`
	CallingNAI   *uint8       `json:"calling_nai,omitempty"`
	Presentation *uint8       `json:"presentation,omitempty"`
	CPC          *uint8       `json:"cpc,omitempty"`
	NCI          *uint8       `json:"nci,omitempty"`
	FCI          *uint16      `json:"fci,omitempty"`
	Params       []wire.Param `json:"params,omitempty"`
}

// Seized is the ack of an outseize: the call's handle and where the IAM went.
type Seized struct {
	Call uint64
	DPC  uint32
	CIC  uint16
}

// Outseize places a call and returns its handle once the IAM is sent.
func (c *Client) Outseize(ctx context.Context, o Outseize) (Seized, error) {
	m, err := c.Do(ctx, struct {
		Type string `json:"type"`
		Outseize
	}{wire.TypeOutseize, o})
	if err != nil {
		return Seized{}, err
	}
	return Seized{Call: m.Call, DPC: m.DPC, CIC: m.CIC}, nil
}

// Alert sends ACM for an incoming call.
func (c *Client) Alert(ctx context.Context, call uint64) error {
	_, err := c.Do(ctx, map[string]any{"type": wire.TypeAlert, "call": call})
	return err
}

// Progress sends CPG with an event code (1 alerting, 2 progress, 3 in-band
// information, ...) for an incoming call.
func (c *Client) Progress(ctx context.Context, call uint64, event uint8) error {
	_, err := c.Do(ctx, map[string]any{"type": wire.TypeProgress, "call": call, "event": event})
	return err
}

// Answer sends ANM (or CON) for an incoming call.
func (c *Client) Answer(ctx context.Context, call uint64) error {
	_, err := c.Do(ctx, map[string]any{"type": wire.TypeAnswer, "call": call})
	return err
}

// Release ends a call with a Q.850 cause and location (0 for the defaults,
// 16 normal clearing and 1 private network serving the local user). The call's
// released event follows the ack.
func (c *Client) Release(ctx context.Context, call uint64, cause, location uint8) error {
	req := map[string]any{"type": wire.TypeRelease, "call": call}
	if cause != 0 {
		req["cause"] = cause
	}
	if location != 0 {
		req["location"] = location
	}
	_, err := c.Do(ctx, req)
	return err
}

// Overload declares this host's overload level (0-2).
func (c *Client) Overload(ctx context.Context, level int) error {
	_, err := c.Do(ctx, map[string]any{"type": wire.TypeOverload, "level": level})
	return err
}

// Status asks for the gateway's status (the ack's data).
func (c *Client) Status(ctx context.Context) (map[string]any, error) {
	m, err := c.Do(ctx, map[string]any{"type": wire.TypeStatus})
	return m.Data, err
}
