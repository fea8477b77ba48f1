package mtp

import (
	"errors"
	"sync"
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

// DefaultRerouteDelay is how long an SLS must be idle before it moves back
// to a link that became available again. Messages already sent on the
// current link arrive first, so per-SLS order holds (as controlled
// rerouting does in Q.704 §8).
const DefaultRerouteDelay = time.Second

// Table maps a DPC to a route. Safe for concurrent use.
type Table struct {
	mu      sync.RWMutex
	routes  map[PointCode]*route
	def     *route
	now     func() time.Time
	reroute time.Duration
	// prohibited[link][pc] is set by DUNA and cleared by DAVA.
	prohibited map[string]map[PointCode]uint8
}

// TableOption configures a Table.
type TableOption func(*Table)

// WithRerouteDelay sets the controlled rerouting delay.
func WithRerouteDelay(d time.Duration) TableOption { return func(t *Table) { t.reroute = d } }

// WithNow replaces the clock (tests).
func WithNow(now func() time.Time) TableOption { return func(t *Table) { t.now = now } }

// NewTable returns an empty routing table.
func NewTable(opts ...TableOption) *Table {
	t := &Table{routes: map[PointCode]*route{}, now: time.Now, reroute: DefaultRerouteDelay,
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
	link Link
	last time.Time
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
	t.mu.RLock()
	r := t.routes[dpc]
	if r == nil {
		r = t.def
	}
	if r == nil {
		t.mu.RUnlock()
		return nil, ErrNoRoute
	}
	var buf [8]Link
	avail := buf[:0]
	for _, l := range r.links {
		if l.Available() && t.reachable(l, dpc) {
			avail = append(avail, l)
		}
	}
	t.mu.RUnlock()
	if len(avail) == 0 {
		return nil, ErrUnavailable
	}
	preferred := avail[0]
	if r.mode == Loadshare {
		preferred = avail[int(sls)%len(avail)]
	}
	now := t.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	st := &r.sls[sls]
	cur := st.link
	keep := false
	if cur != nil && cur != preferred && now.Sub(st.last) < t.reroute {
		for _, l := range avail {
			if l == cur {
				keep = true // still up: stay until the SLS has been idle
				break
			}
		}
	}
	if !keep {
		st.link = preferred
	}
	st.last = now
	return st.link, nil
}

// Transfer routes m and sends it.
// If the chosen link went down between choice and send (failover in
// progress), it chooses again, a bounded number of times.
func (t *Table) Transfer(m *Message) error {
	var err error
	for range 3 {
		var l Link
		if l, err = t.Select(m.DPC, m.SLS); err != nil {
			return err
		}
		if err = l.Send(m); err == nil || l.Available() {
			return err
		}
	}
	return err
}

// StreamForSLS maps an SLS onto streams 1..n-1; stream 0 is for management
// (RFC 4666 §1.4.7) and never carries DATA.
func StreamForSLS(sls uint8, n uint16) uint16 {
	if n < 2 {
		return 1
	}
	return 1 + uint16(sls)%(n-1)
}
