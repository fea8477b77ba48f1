package gateway

import (
	"context"
	"sort"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/sprc"
)

// Status is what `isupgw status` shows: served as JSON at /status.
type Status struct {
	PointCode mtp.PointCode `json:"point_code"`
	// PC is the point code as the configuration writes it (a number, 3-8-3
	// or 8-8-8); PointCodeFormat names that format.
	PC              string `json:"pc"`
	PointCodeFormat string `json:"point_code_format"`
	Uptime          string `json:"uptime"`
	// Transport is the SCTP the M3UA associations run on (kernel, udp or
	// raw; absent without M3UA): what auto-detection chose, for operators
	// and for tests that must know.
	Transport    string              `json:"transport,omitempty"`
	Associations []AssociationStatus `json:"associations"`
	Destinations []DestinationStatus `json:"destinations"`
	Circuits     map[string]int      `json:"circuits"`
	Calls        int                 `json:"calls"`
	Congestion   *CongestionStatus   `json:"congestion,omitempty"`
	// Links are the signalling links of an MTP3 node (WithMTP).
	Links []LinkStatus `json:"links,omitempty"`
	// Redundancy is the role in an active/standby pair (absent when single).
	Redundancy *RedundancyStatus `json:"redundancy,omitempty"`
}

// LinkStatus is one MTP3 signalling link.
type LinkStatus struct {
	Linkset     string `json:"linkset"`
	Link        string `json:"link"`
	SLC         uint8  `json:"slc"`
	State       string `json:"state"`
	Available   bool   `json:"linkset_available"`
	MSUsOut     uint64 `json:"msus_out"`
	MSUsIn      uint64 `json:"msus_in"`
	SLTPassed   uint64 `json:"slt_passed"`
	SLTFailed   uint64 `json:"slt_failed"`
	Changeovers uint64 `json:"changeovers"`
	Changebacks uint64 `json:"changebacks"`
	Failures    uint64 `json:"failures"`
	LastFailure string `json:"last_failure,omitempty"`
}

// AssociationStatus is one M3UA association.
type AssociationStatus struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

// DestinationStatus is one adjacent exchange.
type DestinationStatus struct {
	Name         string  `json:"name"`
	PointCode    uint32  `json:"point_code"`
	PC           string  `json:"pc"` // as the configuration writes it
	Available    bool    `json:"available"`
	ACL          int     `json:"acl"`
	MTPAdmit     float64 `json:"mtp_admit"`
	MTPLevel     uint8   `json:"mtp_congestion_level"`
	OutOfService bool    `json:"out_of_service"`
	Reason       string  `json:"reason,omitempty"`
	Violation    string  `json:"constraint_violation,omitempty"`
	Calls        int     `json:"calls"`
	// Slow: the adaptive admission limits new calls to it because it
	// answers slowly while the gateway's own queue is quick (alarm 0x1C).
	Slow bool `json:"slow"`
}

// CongestionStatus is the own congestion state.
type CongestionStatus struct {
	InboundLevel    int     `json:"inbound_level"`
	OutboundLevel   int     `json:"outbound_level"`
	InboundDelayMS  float64 `json:"inbound_delay_ms"`
	OutboundDelayMS float64 `json:"outbound_delay_ms"`
	InboundAvgMS    float64 `json:"inbound_average_ms"`
	OutboundAvgMS   float64 `json:"outbound_average_ms"`
	CodeYellow      bool    `json:"code_yellow"`
	ACLSent         int     `json:"acl_sent"`
	HostOverload    int     `json:"host_overload"`
	Level1DelayMS   float64 `json:"level1_delay_ms"`
	Level1AvgMS     float64 `json:"level1_average_ms"`
	// Level1Outseize is the outbound level-1 policy (refuse or throttle);
	// ThrottleTargetMS its target wait; Level1Admitted the calls it let through.
	Level1Outseize   string  `json:"level1_outseize"`
	ThrottleTargetMS float64 `json:"throttle_target_ms,omitempty"`
	Level1Admitted   uint64  `json:"level1_admitted"`
	// Admission is the adaptive limit on calls in set-up (nil when off);
	// OutboundLevel is the probes' level, its level is told beside it.
	Admission *AdmissionStatus `json:"admission,omitempty"`
}

// AdmissionStatus is the adaptive admission's state, overall.
type AdmissionStatus struct {
	Level   int `json:"level"`
	Limit   int `json:"limit"`
	InSetup int `json:"in_setup"`
}

// PeerStates maps each configured association to its ASP state.
func (g *Gateway) PeerStates() map[string]string {
	out := map[string]string{}
	for _, p := range g.cfg.M3UA.Peers {
		if a := g.Endpoint.Peer(p.Name); a != nil {
			out[p.Name] = a.State().String()
		}
	}
	return out
}

// Status assembles the gateway's state: fresh from the stack's loop when it
// answers within 250 ms, else (a congested loop) its last published snapshot,
// so asking never hangs.
func (g *Gateway) Status() Status {
	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
	snap, err := g.Stack.Inspect(ctx)
	cancel()
	if err != nil {
		snap = g.Stack.Stats()
	}
	pcf := g.cfg.Stack.PointCodes
	st := Status{PointCode: g.cfg.Stack.OPC, PC: pcf.Format(g.cfg.Stack.OPC), PointCodeFormat: pcf.String(), Uptime: time.Since(g.started).Round(time.Second).String(),
		Circuits: snap.CircuitsByState, Calls: snap.Calls}
	if len(g.cfg.M3UA.Peers) > 0 {
		st.Transport = g.cfg.M3UA.Transport.String()
	}
	for name, state := range g.PeerStates() {
		st.Associations = append(st.Associations, AssociationStatus{Name: name, State: state})
	}
	if r := g.Redundancy(); r.Role != RoleSingle {
		st.Redundancy = &r
	}
	sort.Slice(st.Associations, func(i, j int) bool { return st.Associations[i].Name < st.Associations[j].Name })
	if g.opts.links != nil {
		st.Links = g.opts.links()
	}
	byPC := map[mtp.PointCode]sprc.DestinationStatus{}
	var gates map[mtp.PointCode]sprc.AdmissionGate
	if g.Control != nil {
		c := g.Control.Snapshot()
		for _, d := range c.Destinations {
			byPC[d.PC] = d
		}
		gates = c.Admission.Destinations
		st.Congestion = &CongestionStatus{InboundLevel: int(c.Level[sprc.Inbound]), OutboundLevel: int(c.Level[sprc.Outbound]),
			InboundDelayMS: ms(c.LastDelay[sprc.Inbound]), OutboundDelayMS: ms(c.LastDelay[sprc.Outbound]),
			InboundAvgMS: ms(c.AverageDelay[sprc.Inbound]), OutboundAvgMS: ms(c.AverageDelay[sprc.Outbound]),
			CodeYellow: c.CodeYellow, ACLSent: int(c.ACLSent), HostOverload: int(c.HostOverload)}
		cfg := g.Control.Config()
		st.Congestion.Level1DelayMS, st.Congestion.Level1AvgMS = ms(cfg.Level1Delay), ms(cfg.Level1Average)
		st.Congestion.Level1Outseize, st.Congestion.Level1Admitted = cfg.Level1Outseize.String(), c.Level1Admitted
		if cfg.Level1Outseize == sprc.Level1Throttle {
			st.Congestion.ThrottleTargetMS = ms(cfg.ThrottleTarget)
		}
		if a := c.Admission; a.Enabled {
			st.Congestion.Admission = &AdmissionStatus{Level: int(a.Level), Limit: a.Limit, InSetup: a.InSetup}
		}
	}
	for _, grp := range g.cfg.Stack.Groups {
		d := byPC[grp.DPC]
		admit := d.MTPAdmit
		if admit == 0 && d.MTPStep == 0 {
			admit = 1
		}
		st.Destinations = append(st.Destinations, DestinationStatus{Name: grp.Name, PointCode: uint32(grp.DPC), PC: pcf.Format(grp.DPC), Available: g.avail.isUp(grp.DPC),
			ACL: int(d.ACL), MTPAdmit: admit, MTPLevel: d.MTPLevel, OutOfService: d.OutOfService, Reason: d.Reason, Violation: d.Violation, Calls: d.Calls,
			Slow: gates[grp.DPC].Slow})
	}
	return st
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (a *availability) isUp(pc mtp.PointCode) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.up[pc]
}
