package gateway

import (
	"sync"
	"time"

	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
)

// Active/standby: two gateways with one point code and the same circuit
// groups are two ASPs of one AS in override mode at the STP (m3ua.Peer
// Standby). The one whose ASP is active owns the circuits; the other keeps
// its association up, its ASP inactive, refuses outseizes (StatusStandby) and
// takes over when the STP says the AS has no active ASP. The role follows the
// ASP state of the standby-capable associations, never a local decision, so
// the STP is the one arbiter and the pair cannot both be active for long
// (override: the last ASP Active wins and the other is told "Alternate ASP
// Active").

// Roles.
const (
	RoleSingle  = "single" // no standby-capable association: not part of a pair
	RoleActive  = "active"
	RoleStandby = "standby"
)

// redundancy tracks the role.
type redundancy struct {
	peers map[string]bool // standby-capable associations
	mu    sync.Mutex
	up    map[string]bool // of those, the ones ASP-ACTIVE
	role  string
	since time.Time
	// changes counts role changes; takeovers those to active.
	changes, takeovers uint64
}

func newRedundancy(cfg Config) *redundancy {
	r := &redundancy{peers: map[string]bool{}, up: map[string]bool{}, role: RoleSingle, since: time.Now()}
	for _, p := range cfg.M3UA.Peers {
		if p.Standby {
			r.peers[p.Name] = true
			r.role = RoleStandby
		}
	}
	return r
}

// peerState records a standby-capable association's state and returns the
// new role if it changed ("" otherwise).
func (r *redundancy) peerState(peer string, active bool) string {
	if !r.peers[peer] {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.up[peer] = active
	role := RoleStandby
	for _, a := range r.up {
		if a {
			role = RoleActive
		}
	}
	if role == r.role {
		return ""
	}
	r.role, r.since = role, time.Now()
	r.changes++
	if role == RoleActive {
		r.takeovers++
	}
	return role
}

// RedundancyStatus is the gateway's place in an active/standby pair.
type RedundancyStatus struct {
	Role      string    `json:"role"`
	Since     time.Time `json:"since"`
	Changes   uint64    `json:"changes"`
	Takeovers uint64    `json:"takeovers"`
}

// Redundancy reports the role ("single" outside a pair), since when, and how
// many times it changed.
func (g *Gateway) Redundancy() RedundancyStatus {
	r := g.red
	r.mu.Lock()
	defer r.mu.Unlock()
	return RedundancyStatus{Role: r.role, Since: r.since, Changes: r.changes, Takeovers: r.takeovers}
}

// roleEvent applies a standby-capable association's new state before the
// pause and resume it implies reach the stack: a takeover is queued ahead of
// the resume (which then resets the groups), giving up the circuits after
// the pause (which releases the unanswered calls). Hosts hear an alarm.
func (g *Gateway) roleEvent(ps mtp.PeerState) (after func()) {
	role := g.red.peerState(ps.Peer, ps.State == "active")
	switch role {
	case RoleActive:
		g.Stack.Takeover()
		g.raise(stack.Alarm{Kind: stack.AlarmStandby, Cleared: true, Text: "takeover: this gateway is now the active one of its pair"})
	case RoleStandby:
		return func() {
			g.Stack.Standby("standby: " + ps.Reason)
			g.raise(stack.Alarm{Kind: stack.AlarmStandby, Text: "this gateway is the standby of its pair: " + ps.Reason})
		}
	}
	return nil
}

// standbyEdge refuses every outseize at once while the gateway is standby;
// otherwise the congestion edge (if any) decides.
func (g *Gateway) standbyEdge(dpc mtp.PointCode, route string) (stack.Status, bool, stack.Queued) {
	g.red.mu.Lock()
	standby := g.red.role == RoleStandby
	g.red.mu.Unlock()
	if standby {
		return stack.StatusStandby, true, nil
	}
	if g.Control != nil {
		return g.edgeAdmit(dpc, route)
	}
	return stack.StatusOK, false, nil
}

// raise gives hosts (through the stack's event sink) an alarm of the gateway's own.
func (g *Gateway) raise(a stack.Alarm) { g.sink(a) }
