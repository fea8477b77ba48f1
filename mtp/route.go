package mtp

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Link is one way to a destination: an M3UA association in mtp/m3ua.
type Link interface {
	Name() string
	// Available reports whether traffic may be sent now (M3UA ACTIVE).
	Available() bool
	// Send transmits one message; the SLS picks the SCTP stream.
	Send(m *Message) error
}

// Mode is how a route spreads traffic over its links (RFC 4666 traffic
// mode: override or loadshare).
type Mode int

// Modes.
const (
	Override  Mode = 1 // all traffic on the first available link, in order given
	Loadshare Mode = 2 // SLS spreads traffic over all available links
)

// Errors from routing.
var (
	ErrNoRoute     = errors.New("mtp: no route to destination")
	ErrUnavailable = errors.New("mtp: destination unavailable (no active association reaches it)")
)

// DefaultRerouteDelay is how long an SLS must be idle before it moves to
// another link. On failback (a preferred link returns) the SLS simply stays
// where it is until then (controlled rerouting, Q.704 §8). On failover (its
// link went down) new messages are held for the rest of the delay and then
// sent, in order, on the new link (time-controlled changeover, Q.704 §5.6):
// what the peer already received on the old association is delivered
// first, so per-SLS order holds.
const DefaultRerouteDelay = time.Second

// Table maps a DPC to a route. Safe for concurrent use.
type Table struct {
	mu      sync.RWMutex
	routes  map[PointCode]*route
	def     *route
	now     func() time.Time
	after   func(time.Duration, func())
	reroute time.Duration
	// Held counts messages held during a changeover; Dropped those that
	// found no link when the changeover ended.
	Held, Dropped atomic.Uint64
	// prohibited[link][pc] is set by DUNA and cleared by DAVA.
	prohibited map[string]map[PointCode]uint8
}

// TableOption configures a Table.
type TableOption func(*Table)

// WithRerouteDelay sets the controlled rerouting delay.
func WithRerouteDelay(d time.Duration) TableOption { return func(t *Table) { t.reroute = d } }

// WithNow replaces the clock (tests).
func WithNow(now func() time.Time) TableOption { return func(t *Table) { t.now = now } }

// WithAfterFunc replaces time.AfterFunc for the changeover timer (tests).
func WithAfterFunc(after func(time.Duration, func())) TableOption {
	return func(t *Table) { t.after = after }
}

// NewTable returns an empty routing table.
func NewTable(opts ...TableOption) *Table {
	t := &Table{routes: map[PointCode]*route{}, now: time.Now, reroute: DefaultRerouteDelay,
		after:      func(d time.Duration, f func()) { time.AfterFunc(d, f) },
		prohibited: map[string]map[PointCode]uint8{}}
	for _, o := range opts {
		o(t)
	}
	return t
}

type route struct {
	mode  Mode
	links []Link
	mu    sync.Mutex
	sls   [256]slsState
}

type slsState struct {
	link    Link
	last    time.Time
	holding bool       // changeover in progress
	held    []*Message // copies, sent in order when the changeover ends
}

// Add sets the route to dpc. Links are in preference order for Override.
func (t *Table) Add(dpc PointCode, mode Mode, links ...Link) {
	t.mu.Lock()
	t.routes[dpc] = &route{mode: mode, links: links}
	t.mu.Unlock()
}

// SetDefault sets the route used for DPCs without their own.
func (t *Table) SetDefault(mode Mode, links ...Link) {
	t.mu.Lock()
	t.def = &route{mode: mode, links: links}
	t.mu.Unlock()
}

// SetProhibited records that link cannot reach pc/mask (DUNA) or can again
// (DAVA, prohibited false).
func (t *Table) SetProhibited(link string, pc PointCode, mask uint8, prohibited bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.prohibited[link]
	if prohibited {
		if m == nil {
			m = map[PointCode]uint8{}
			t.prohibited[link] = m
		}
		m[pc] = mask
		return
	}
	// DAVA for a range clears every entry it covers.
	for p := range m {
		if covers(pc, mask, p) {
			delete(m, p)
		}
	}
	if len(m) == 0 {
		delete(t.prohibited, link) // keeps the per-message check a length test
	}
}

// ClearProhibited forgets DUNAs learnt on a link (the association restarted;
// the peer will send fresh ones).
func (t *Table) ClearProhibited(link string) {
	t.mu.Lock()
	delete(t.prohibited, link)
	t.mu.Unlock()
}

func covers(pc PointCode, mask uint8, p PointCode) bool {
	if mask >= 24 {
		return true
	}
	return pc>>mask == p>>mask
}

func (t *Table) reachable(l Link, dpc PointCode) bool {
	if len(t.prohibited) == 0 {
		return true
	}
	for pc, mask := range t.prohibited[l.Name()] {
		if covers(pc, mask, dpc) {
			return false
		}
	}
	return true
}

// Select returns the link for a message to dpc with the given SLS and
// remembers the choice, so the SLS stays on it while it is available.
func (t *Table) Select(dpc PointCode, sls uint8) (Link, error) {
	var buf [8]Link
	r, avail, err := t.lookup(dpc, buf[:0])
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return t.chooseLocked(r, avail, sls, t.now()), nil
}

// lookup finds the route and appends its usable links to avail (a buffer
// on the caller's stack: no allocation per message).
func (t *Table) lookup(dpc PointCode, avail []Link) (*route, []Link, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	r := t.routes[dpc]
	if r == nil {
		r = t.def
	}
	if r == nil {
		return nil, nil, ErrNoRoute
	}
	for _, l := range r.links {
		if l.Available() && t.reachable(l, dpc) {
			avail = append(avail, l)
		}
	}
	if len(avail) == 0 {
		return nil, nil, ErrUnavailable
	}
	return r, avail, nil
}

func contains(ls []Link, l Link) bool {
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}

// chooseLocked applies the SLS rules; r.mu is held.
func (t *Table) chooseLocked(r *route, avail []Link, sls uint8, now time.Time) Link {
	preferred := avail[0]
	if r.mode == Loadshare {
		preferred = avail[int(sls)%len(avail)]
	}
	st := &r.sls[sls]
	if st.link == nil || st.link == preferred || now.Sub(st.last) >= t.reroute || !contains(avail, st.link) {
		st.link = preferred
	}
	st.last = now
	return st.link
}

// Transfer routes m and sends it. If its SLS's link has just failed, m is
// held (copied) and sent when the changeover ends; Transfer then returns
// nil. If the chosen link went down between choice and send, it chooses
// again, a bounded number of times.
func (t *Table) Transfer(m *Message) error {
	var err error
	var buf [8]Link
	for range 3 {
		var r *route
		var avail []Link
		if r, avail, err = t.lookup(m.DPC, buf[:0]); err != nil {
			return err
		}
		now := t.now()
		r.mu.Lock()
		st := &r.sls[m.SLS]
		if st.holding || (st.link != nil && !contains(avail, st.link) && now.Sub(st.last) < t.reroute) {
			if !st.holding {
				st.holding = true
				t.after(t.reroute-now.Sub(st.last), func() { t.endChangeover(m.DPC, r, m.SLS) })
			}
			c := *m
			c.Payload = append([]byte(nil), m.Payload...)
			st.held = append(st.held, &c)
			r.mu.Unlock()
			t.Held.Add(1)
			return nil
		}
		l := t.chooseLocked(r, avail, m.SLS, now)
		r.mu.Unlock()
		if err = l.Send(m); err == nil || l.Available() {
			return err
		}
	}
	return err
}

// endChangeover sends the held messages of one SLS in order on its new
// link. Transfers arriving meanwhile queue behind them.
func (t *Table) endChangeover(dpc PointCode, r *route, sls uint8) {
	for {
		r.mu.Lock()
		st := &r.sls[sls]
		batch := st.held
		st.held = nil
		if len(batch) == 0 {
			st.holding = false
			r.mu.Unlock()
			return
		}
		st.link = nil // choose afresh among the links up now
		r.mu.Unlock()
		var buf [8]Link
		for _, m := range batch {
			_, avail, err := t.lookup(dpc, buf[:0])
			if err != nil {
				t.Dropped.Add(1)
				continue
			}
			r.mu.Lock()
			l := t.chooseLocked(r, avail, sls, t.now())
			r.mu.Unlock()
			if l.Send(m) != nil {
				t.Dropped.Add(1)
			}
		}
	}
}

// StreamForSLS maps an SLS onto streams 1..n-1; stream 0 is for management
// (RFC 4666 §1.4.7) and does not carry DATA. An association with a single
// outbound stream has only stream 0: DATA goes there, since stream 1 does not
// exist and every write to it would fail (a peer that offers one stream
// expects everything on it; a strict one answers ERR 0x09, which says why).
func StreamForSLS(sls uint8, n uint16) uint16 {
	if n < 2 {
		return 0
	}
	return 1 + uint16(sls)%(n-1)
}
