package client

import (
	"slices"
	"sync"

	"github.com/isupgw/isupgw/host/wire"
)

// Gateways is what a host attached to several gateways knows of each, to
// choose where a new call goes (docs/deployment.md): whether its connection
// is up, whether it is the standby of a pair (alarm 0x40 until its
// alarm_cleared, or a nak 0x0120), which destinations it serves (its circuit
// groups' point codes; nil: any) and which of them it reports unavailable
// (alarms 0x17 destination unavailable and 0x18 destination out of service,
// until cleared), and how many calls it carries for this host. Multi uses it;
// so does the load generator, which has its own connections (loadgen).
// Safe for concurrent use.
type Gateways struct {
	mu   sync.Mutex
	gw   []gatewayState
	next int // round-robin cursor among the least loaded
}

type gatewayState struct {
	down, standby bool
	serves        []uint32        // nil: any destination
	unavailable   map[uint32]bool // destinations reported unavailable
	calls         int
}

// NewGateways tracks n gateways, all up, active and serving any destination.
func NewGateways(n int) *Gateways {
	g := &Gateways{gw: make([]gatewayState, n)}
	for i := range g.gw {
		g.gw[i].unavailable = map[uint32]bool{}
	}
	return g
}

// Len is the number of gateways.
func (g *Gateways) Len() int { return len(g.gw) }

// SetServes says which destinations gateway i has circuit groups towards
// (nil: any).
func (g *Gateways) SetServes(i int, dpcs []uint32) {
	g.mu.Lock()
	g.gw[i].serves = slices.Clone(dpcs)
	g.mu.Unlock()
}

// SetDown marks gateway i's connection lost (or back).
func (g *Gateways) SetDown(i int, down bool) {
	g.mu.Lock()
	g.gw[i].down = down
	g.mu.Unlock()
}

// SetStandby marks gateway i standby (or active).
func (g *Gateways) SetStandby(i int, standby bool) {
	g.mu.Lock()
	g.gw[i].standby = standby
	g.mu.Unlock()
}

// SetUnavailable marks destination dpc unavailable (or available) at gateway i.
func (g *Gateways) SetUnavailable(i int, dpc uint32, unavailable bool) {
	g.mu.Lock()
	if unavailable {
		g.gw[i].unavailable[dpc] = true
	} else {
		delete(g.gw[i].unavailable, dpc)
	}
	g.mu.Unlock()
}

// Alarm applies an alarm or alarm_cleared of gateway i (number, cleared, and
// its data's dpc when it has one) and says whether it changed where calls
// may go.
func (g *Gateways) Alarm(i int, number uint16, cleared bool, dpc uint32, hasDPC bool) bool {
	switch {
	case number == wire.AlarmStandby:
		g.SetStandby(i, !cleared)
	case (number == wire.AlarmDestinationUnavailable || number == wire.AlarmDestinationOutOfServ) && hasDPC:
		g.SetUnavailable(i, dpc, !cleared)
	default:
		return false
	}
	return true
}

// Observe applies an event of gateway i (alarms; the rest is ignored).
func (g *Gateways) Observe(i int, ev Event) bool {
	a, ok := ev.(*Alarm)
	if !ok {
		return false
	}
	dpc, hasDPC := a.Data["dpc"].(float64)
	return g.Alarm(i, a.Number, a.Cleared, uint32(dpc), hasDPC)
}

// CallStarted and CallEnded count the calls gateway i carries (least loaded
// first).
func (g *Gateways) CallStarted(i int) { g.addCalls(i, 1) }

// CallEnded: see CallStarted.
func (g *Gateways) CallEnded(i int) { g.addCalls(i, -1) }

func (g *Gateways) addCalls(i, n int) {
	g.mu.Lock()
	g.gw[i].calls = max(0, g.gw[i].calls+n)
	g.mu.Unlock()
}

// Available says whether gateway i takes new calls for dpc (0: any
// destination): connected, not standby, serving dpc, and dpc not reported
// unavailable there.
func (g *Gateways) Available(i int, dpc uint32) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.availableLocked(i, dpc)
}

func (g *Gateways) availableLocked(i int, dpc uint32) bool {
	s := &g.gw[i]
	if s.down || s.standby {
		return false
	}
	if dpc == 0 {
		return true
	}
	return (s.serves == nil || slices.Contains(s.serves, dpc)) && !s.unavailable[dpc]
}

// Pick chooses the gateway for a new call to dpc (0: any) among the
// available ones not in tried (a bit per gateway, for retries): the one
// carrying the fewest calls, turns taken among equals so that an idle set of
// gateways shares calls round robin. -1: none.
func (g *Gateways) Pick(dpc uint32, tried uint64) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	best, n := -1, len(g.gw)
	for k := range n {
		i := (g.next + k) % n
		if i < 64 && tried&(1<<i) != 0 || !g.availableLocked(i, dpc) {
			continue
		}
		if best < 0 || g.gw[i].calls < g.gw[best].calls {
			best = i
		}
	}
	if best >= 0 {
		g.next = (best + 1) % n
	}
	return best
}
