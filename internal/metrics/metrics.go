// Package metrics exposes the gateway's counters and states in Prometheus form.
// Everything is read at scrape time from snapshots the parts keep anyway, so
// metrics cost nothing on the call path and a scrape never waits behind a
// congested queue.
package metrics

import (
	"github.com/isupgw/isupgw/mtp"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/isupgw/isupgw/host"
	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/sprc"
)

// Sources are where the collector reads from; nil ones are left out.
type Sources struct {
	// PointCodes writes the dpc labels (the configuration's format; zero:
	// numbers).
	PointCodes mtp.PointCodeFormat
	Stack      func() stack.Snapshot
	M3UA       *m3ua.Stats
	Peers      func() map[string]string // association name -> ASP state
	Control    func() sprc.Stats
	Host       func() host.MetricsSnapshot
	// Links are the own MTP3's signalling links (mtp3 section).
	Links func() []Link
	// Redundancy is the role in an active/standby pair and its change count.
	Redundancy func() (role string, changes uint64)
}

// Link is one MTP3 signalling link's figures.
type Link struct {
	Linkset, Name                      string
	Available                          bool
	MSUsOut, MSUsIn                    uint64
	SLTPassed, SLTFailed               uint64
	Changeovers, Changebacks, Failures uint64
}

type collector struct {
	src   Sources
	descs map[string]*prometheus.Desc
}

// metric names and help texts; README lists them.
var defs = []struct {
	name, help string
	labels     []string
}{
	{"isupgw_isup_messages_received_total", "ISUP messages received, by message type.", []string{"type"}},
	{"isupgw_isup_messages_sent_total", "ISUP messages sent, by message type.", []string{"type"}},
	{"isupgw_isup_decode_errors_total", "ISUP messages that could not be decoded.", nil},
	{"isupgw_isup_unknown_cic_total", "ISUP messages for CICs not configured (UCIC answered).", nil},
	{"isupgw_isup_unexpected_total", "ISUP messages that did not fit the circuit's state.", nil},
	{"isupgw_isup_unrecognised_total", "Unrecognised ISUP messages and parameters (compatibility procedures).", []string{"what"}},
	{"isupgw_isup_glare_total", "Dual seizures detected.", nil},
	{"isupgw_isup_repeat_attempts_total", "Outgoing calls repeated on another circuit (glare, blocking, UCIC).", nil},
	{"isupgw_isup_timer_expiries_total", "ISUP timer expiries, by timer.", []string{"timer"}},
	{"isupgw_isup_held_back_total", "ANSI messages held back under MTP congestion by priority.", nil},
	{"isupgw_calls_total", "Calls started, by direction.", []string{"direction"}},
	{"isupgw_calls_active", "Calls in progress.", nil},
	{"isupgw_outseize_refused_total", "Outseize requests refused, by status.", []string{"status"}},
	{"isupgw_circuits", "Circuits by state.", []string{"state"}},
	{"isupgw_isup_timers_running", "ISUP timers running.", nil},
	{"isupgw_m3ua_data_messages_total", "M3UA DATA messages, by direction.", []string{"direction"}},
	{"isupgw_m3ua_bytes_total", "M3UA bytes, by direction.", []string{"direction"}},
	{"isupgw_m3ua_errors_total", "M3UA problems, by kind (malformed, unexpected, refused_peer, refused_takeover, unsolicited_ack, tack_retransmit, beat_timeout, reconnect, no_route).", []string{"kind"}},
	{"isupgw_m3ua_recovery_messages_total", "DATA an SG queued for an AS-PENDING AS during T(r), by outcome (queued, delivered, dropped: queue full, discarded: T(r) expired).", []string{"outcome"}},
	{"isupgw_m3ua_association_up", "1 when the association's ASP state is active.", []string{"association", "state"}},
	{"isupgw_redundancy_role", "1 for the gateway's role in an active/standby pair (single, active or standby).", []string{"role"}},
	{"isupgw_redundancy_role_changes_total", "Role changes of an active/standby gateway (takeovers and returns to standby).", nil},
	{"isupgw_sprc_level", "Own congestion level (0-2), by queue direction.", []string{"direction"}},
	{"isupgw_sprc_probe_delay_seconds", "Last queue probe delay, by direction.", []string{"direction"}},
	{"isupgw_sprc_probe_delay_average_seconds", "Average queue probe delay, by direction.", []string{"direction"}},
	{"isupgw_sprc_refused_total", "New outgoing calls refused by congestion control, by reason.", []string{"reason"}},
	{"isupgw_sprc_admitted_total", "New outgoing calls admitted by congestion control.", nil},
	{"isupgw_sprc_inbound_shed_total", "Inbound IAM/SAM dropped at the edge at inbound level 2.", nil},
	{"isupgw_sprc_level1_admitted_total", "Outgoing calls the level-1 throttle admitted at outbound level 1 (congestion.level1_outseize: throttle).", nil},
	{"isupgw_sprc_admission_level", "Adaptive admission's level (0-1): 1 while it refuses the excess (raises alarm 0x16 outbound and the ACL).", nil},
	{"isupgw_sprc_admission_limit", "Adaptive admission's limit on calls in set-up (IAM sent, no backward message yet), overall.", nil},
	{"isupgw_sprc_admission_in_setup", "Outgoing calls in set-up now, overall.", nil},
	{"isupgw_sprc_inbound_refused_total", "Inbound IAMs released with cause 42 (inbound level 1 or Code Yellow).", nil},
	{"isupgw_sprc_priority_drops_total", "ANSI messages held back under MTP congestion.", nil},
	{"isupgw_sprc_acl_sent", "Automatic congestion level put in RELs now (0 none).", nil},
	{"isupgw_sprc_host_overload", "Highest overload level the hosts declare.", nil},
	{"isupgw_sprc_code_yellow", "1 while in Code Yellow.", nil},
	{"isupgw_sprc_throttling_sample_activity", "ThrottlingSampleActivity: probe periods of consecutive non-zero latency sampled.", nil},
	{"isupgw_sprc_destination_acl", "ACL received from the destination and in force (0 none).", []string{"dpc"}},
	{"isupgw_sprc_destination_mtp_admit_ratio", "Share of new calls admitted under MTP congestion.", []string{"dpc"}},
	{"isupgw_sprc_destination_out_of_service", "1 while the destination is out of service.", []string{"dpc"}},
	{"isupgw_sprc_destination_constraint_violation", "1 while the destination is in constraint violation.", []string{"dpc"}},
	{"isupgw_sprc_destination_calls", "Concurrent calls with the destination.", []string{"dpc"}},
	{"isupgw_sprc_destination_admission_limit", "Adaptive admission's limit on calls in set-up to the destination (only while the admission is on).", []string{"dpc"}},
	{"isupgw_sprc_destination_in_setup", "Outgoing calls in set-up to the destination now.", []string{"dpc"}},
	{"isupgw_sprc_destination_slow", "1 while the adaptive admission limits new calls to the destination because it answers slowly, the gateway's own queue quick (alarm 0x1C).", []string{"dpc"}},
	{"isupgw_host_connections", "Host API connections open.", nil},
	{"isupgw_host_requests_total", "Host API requests, by type.", []string{"type"}},
	{"isupgw_host_naks_total", "Host API negative answers, by status.", []string{"status"}},
	{"isupgw_host_disconnects_total", "Host API disconnections, by reason.", []string{"reason"}},
	{"isupgw_host_queue_drops_total", "Hosts disconnected because their send queue was full.", nil},
	{"isupgw_mtp3_link_available", "1 while the MTP3 signalling link carries traffic (aligned and tested).", []string{"linkset", "link"}},
	{"isupgw_mtp3_link_msus_total", "MSUs of user parts on the MTP3 signalling link, by direction.", []string{"linkset", "link", "direction"}},
	{"isupgw_mtp3_link_tests_total", "Signalling link tests (SLTM/SLTA, Q.707), by result.", []string{"linkset", "link", "result"}},
	{"isupgw_mtp3_link_events_total", "MTP3 signalling link failures, changeovers away from it and changebacks onto it.", []string{"linkset", "link", "event"}},
}

// NewCollector returns a collector over the sources.
func NewCollector(src Sources) prometheus.Collector {
	c := &collector{src: src, descs: map[string]*prometheus.Desc{}}
	for _, d := range defs {
		c.descs[d.name] = prometheus.NewDesc(d.name, d.help, d.labels, nil)
	}
	return c
}

// Names lists every metric name (for the documentation test).
func Names() []string {
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.name
	}
	return out
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	counter := func(name string, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.CounterValue, v, labels...)
	}
	gauge := func(name string, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.GaugeValue, v, labels...)
	}
	if c.src.Stack != nil {
		s := c.src.Stack()
		st := s.Stats
		for t := 0; t < 256; t++ {
			if st.Received[t] > 0 {
				counter("isupgw_isup_messages_received_total", float64(st.Received[t]), isup.MessageType(t).String())
			}
			if st.Sent[t] > 0 {
				counter("isupgw_isup_messages_sent_total", float64(st.Sent[t]), isup.MessageType(t).String())
			}
		}
		counter("isupgw_isup_decode_errors_total", float64(st.DecodeErrors))
		counter("isupgw_isup_unknown_cic_total", float64(st.UnknownCIC))
		counter("isupgw_isup_unexpected_total", float64(st.Unexpected))
		counter("isupgw_isup_unrecognised_total", float64(st.UnrecognisedMessage), "message")
		counter("isupgw_isup_unrecognised_total", float64(st.UnrecognisedParam), "parameter")
		counter("isupgw_isup_glare_total", float64(st.Glare))
		counter("isupgw_isup_repeat_attempts_total", float64(st.RepeatAttempts))
		counter("isupgw_isup_held_back_total", float64(st.HeldBack))
		for i, n := range st.TimerExpiries {
			if n > 0 {
				counter("isupgw_isup_timer_expiries_total", float64(n), stack.TimerName(i))
			}
		}
		counter("isupgw_calls_total", float64(st.CallsOut), "outgoing")
		counter("isupgw_calls_total", float64(st.CallsIn), "incoming")
		gauge("isupgw_calls_active", float64(s.Calls))
		for status, n := range st.Refused {
			counter("isupgw_outseize_refused_total", float64(n), "0x"+strconv.FormatUint(uint64(status), 16))
		}
		for state, n := range s.CircuitsByState {
			gauge("isupgw_circuits", float64(n), state)
		}
		gauge("isupgw_isup_timers_running", float64(s.PendingTimers))
	}
	if m := c.src.M3UA; m != nil {
		counter("isupgw_m3ua_data_messages_total", float64(m.DataIn.Load()), "in")
		counter("isupgw_m3ua_data_messages_total", float64(m.DataOut.Load()), "out")
		counter("isupgw_m3ua_bytes_total", float64(m.BytesIn.Load()), "in")
		counter("isupgw_m3ua_bytes_total", float64(m.BytesOut.Load()), "out")
		for kind, v := range map[string]uint64{"malformed": m.Malformed.Load(), "unexpected": m.Unexpected.Load(), "refused_peer": m.RefusedPeers.Load(),
			"refused_takeover": m.RefusedTakeovers.Load(), "unsolicited_ack": m.UnsolicitedAcks.Load(),
			"tack_retransmit": m.TackRetransmits.Load(), "beat_timeout": m.BeatTimeouts.Load(), "reconnect": m.Reconnects.Load(), "no_route": m.NoRoute.Load()} {
			counter("isupgw_m3ua_errors_total", float64(v), kind)
		}
		for outcome, v := range map[string]uint64{"queued": m.RecoveryQueued.Load(), "delivered": m.RecoveryDelivered.Load(),
			"dropped": m.RecoveryDropped.Load(), "discarded": m.RecoveryDiscarded.Load()} {
			counter("isupgw_m3ua_recovery_messages_total", float64(v), outcome)
		}
	}
	if c.src.Peers != nil {
		for name, state := range c.src.Peers() {
			up := 0.0
			if state == "active" {
				up = 1
			}
			gauge("isupgw_m3ua_association_up", up, name, state)
		}
	}
	if c.src.Redundancy != nil {
		role, changes := c.src.Redundancy()
		for _, r := range []string{"single", "active", "standby"} {
			gauge("isupgw_redundancy_role", b2f(r == role), r)
		}
		counter("isupgw_redundancy_role_changes_total", float64(changes))
	}
	if c.src.Control != nil {
		s := c.src.Control()
		for _, d := range []sprc.Direction{sprc.Inbound, sprc.Outbound} {
			gauge("isupgw_sprc_level", float64(s.Level[d]), d.String())
			gauge("isupgw_sprc_probe_delay_seconds", s.LastDelay[d].Seconds(), d.String())
			gauge("isupgw_sprc_probe_delay_average_seconds", s.AverageDelay[d].Seconds(), d.String())
		}
		for r := sprc.RefuseOutboundCongestion; r < sprc.Refusal(len(s.Refused)); r++ {
			counter("isupgw_sprc_refused_total", float64(s.Refused[r]), r.String())
		}
		counter("isupgw_sprc_admitted_total", float64(s.Refused[sprc.Admit]))
		counter("isupgw_sprc_inbound_shed_total", float64(s.InboundShed))
		counter("isupgw_sprc_level1_admitted_total", float64(s.Level1Admitted))
		gauge("isupgw_sprc_admission_level", float64(s.Admission.Level))
		gauge("isupgw_sprc_admission_limit", float64(s.Admission.Limit))
		gauge("isupgw_sprc_admission_in_setup", float64(s.Admission.InSetup))
		counter("isupgw_sprc_inbound_refused_total", float64(s.InboundRefused))
		counter("isupgw_sprc_priority_drops_total", float64(s.PriorityDrops))
		gauge("isupgw_sprc_acl_sent", float64(s.ACLSent))
		gauge("isupgw_sprc_host_overload", float64(s.HostOverload))
		gauge("isupgw_sprc_code_yellow", b2f(s.CodeYellow))
		gauge("isupgw_sprc_throttling_sample_activity", float64(s.ThrottlingSampleActivity))
		for _, d := range s.Destinations {
			pc := c.src.PointCodes.Format(d.PC)
			gauge("isupgw_sprc_destination_acl", float64(d.ACL), pc)
			gauge("isupgw_sprc_destination_mtp_admit_ratio", d.MTPAdmit, pc)
			gauge("isupgw_sprc_destination_out_of_service", b2f(d.OutOfService), pc)
			gauge("isupgw_sprc_destination_constraint_violation", b2f(d.Violation != ""), pc)
			gauge("isupgw_sprc_destination_calls", float64(d.Calls), pc)
		}
		for pc, g := range s.Admission.Destinations {
			dpc := c.src.PointCodes.Format(pc)
			if s.Admission.Enabled { // off, a limit would bind nothing
				gauge("isupgw_sprc_destination_admission_limit", float64(g.Limit), dpc)
			}
			gauge("isupgw_sprc_destination_in_setup", float64(g.InSetup), dpc)
			gauge("isupgw_sprc_destination_slow", b2f(g.Slow), dpc)
		}
	}
	if c.src.Links != nil {
		for _, l := range c.src.Links() {
			gauge("isupgw_mtp3_link_available", b2f(l.Available), l.Linkset, l.Name)
			counter("isupgw_mtp3_link_msus_total", float64(l.MSUsOut), l.Linkset, l.Name, "out")
			counter("isupgw_mtp3_link_msus_total", float64(l.MSUsIn), l.Linkset, l.Name, "in")
			counter("isupgw_mtp3_link_tests_total", float64(l.SLTPassed), l.Linkset, l.Name, "passed")
			counter("isupgw_mtp3_link_tests_total", float64(l.SLTFailed), l.Linkset, l.Name, "failed")
			counter("isupgw_mtp3_link_events_total", float64(l.Failures), l.Linkset, l.Name, "failure")
			counter("isupgw_mtp3_link_events_total", float64(l.Changeovers), l.Linkset, l.Name, "changeover")
			counter("isupgw_mtp3_link_events_total", float64(l.Changebacks), l.Linkset, l.Name, "changeback")
		}
	}
	if c.src.Host != nil {
		h := c.src.Host()
		gauge("isupgw_host_connections", float64(h.ConnectionsOpen))
		for t, n := range h.Requests {
			counter("isupgw_host_requests_total", float64(n), t)
		}
		for st, n := range h.Naks {
			counter("isupgw_host_naks_total", float64(n), "0x"+strconv.FormatUint(uint64(st), 16))
		}
		for r, n := range h.Disconnects {
			counter("isupgw_host_disconnects_total", float64(n), r)
		}
		counter("isupgw_host_queue_drops_total", float64(h.QueueDrops))
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
