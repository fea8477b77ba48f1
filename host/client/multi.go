package client

import (
	"context"
	"errors"
	"net"
	"sync"

	"github.com/isupgw/isupgw/host/wire"
)

// Multi is a host attached to several gateways, typically the two of an
// active/standby pair (docs/deployment.md). Each new call goes to a gateway
// that is not standby; a call stays on the gateway that took it (its events
// come from that connection and Call names it), so a takeover moves new
// calls, never calls in progress. A gateway is standby from its alarm 0x40
// until the alarm_cleared (its takeover), and also from a nak 0x0120.
type Multi struct {
	clients []*Client
	events  chan GatewayEvent
	mu      sync.Mutex
	standby []bool
	wg      sync.WaitGroup
}

// Call is a call placed through a Multi: the gateway that carries it and
// its handle there.
type Call struct {
	Gateway int
	Seized
}

// GatewayEvent is an event of one of the gateways (index into the addresses).
type GatewayEvent struct {
	Gateway int
	Event   Event
}

// ErrNoActive is returned when every gateway is standby or gone.
var ErrNoActive = errors.New("client: no active gateway")

// DialMulti connects to every address; gateways that cannot be reached are
// left out (nil Client) and at least one must answer.
func DialMulti(ctx context.Context, network string, addrs []string, cfg Config) (*Multi, error) {
	m := &Multi{clients: make([]*Client, len(addrs)), standby: make([]bool, len(addrs)), events: make(chan GatewayEvent, max(cfg.EventBuffer, 1024))}
	var errs []error
	for i, a := range addrs {
		c, err := Dial(ctx, network, a, cfg)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		m.attach(i, c)
	}
	if len(errs) == len(addrs) {
		return nil, errors.Join(errs...)
	}
	go func() { m.wg.Wait(); close(m.events) }()
	return m, nil
}

// NewMulti is DialMulti over connections already open (tests).
func NewMulti(ctx context.Context, conns []net.Conn, cfg Config) (*Multi, error) {
	m := &Multi{clients: make([]*Client, len(conns)), standby: make([]bool, len(conns)), events: make(chan GatewayEvent, max(cfg.EventBuffer, 1024))}
	for i, nc := range conns {
		c, err := New(ctx, nc, cfg)
		if err != nil {
			m.Close()
			return nil, err
		}
		m.attach(i, c)
	}
	go func() { m.wg.Wait(); close(m.events) }()
	return m, nil
}

func (m *Multi) attach(i int, c *Client) {
	m.clients[i] = c
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		for ev := range c.Events() {
			if a, ok := ev.(*Alarm); ok && a.Number == wire.AlarmStandby {
				m.setStandby(i, !a.Cleared)
			}
			m.events <- GatewayEvent{Gateway: i, Event: ev}
		}
	}()
}

func (m *Multi) setStandby(i int, v bool) {
	m.mu.Lock()
	m.standby[i] = v
	m.mu.Unlock()
}

// Active is the index of the gateway new calls go to, or -1.
func (m *Multi) Active() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, c := range m.clients {
		if c == nil || m.standby[i] {
			continue
		}
		select {
		case <-c.Done():
		default:
			return i
		}
	}
	return -1
}

// Events delivers every gateway's events, each with its gateway.
func (m *Multi) Events() <-chan GatewayEvent { return m.events }

// Client is the connection to gateway i (nil if it was not reached).
func (m *Multi) Client(i int) *Client { return m.clients[i] }

// Outseize places a call on the active gateway. A nak "standby" marks that
// gateway standby and the call is tried on the next one; any other answer is
// final.
func (m *Multi) Outseize(ctx context.Context, o Outseize) (Call, error) {
	for range len(m.clients) {
		i := m.Active()
		if i < 0 {
			break
		}
		s, err := m.clients[i].Outseize(ctx, o)
		var nak *Nak
		if errors.As(err, &nak) && nak.Status == wire.StatusStandby {
			m.setStandby(i, true)
			continue
		}
		if errors.Is(err, ErrClosed) {
			continue // that gateway is gone: Active skips it now
		}
		return Call{Gateway: i, Seized: s}, err
	}
	return Call{}, ErrNoActive
}

// Release ends a call on the gateway that carries it.
func (m *Multi) Release(ctx context.Context, c Call, cause, location uint8) error {
	return m.clients[c.Gateway].Release(ctx, c.Call, cause, location)
}

// Close closes every connection.
func (m *Multi) Close() error {
	var errs []error
	for _, c := range m.clients {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}
