package metrics

import (
	"fmt"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
)

// OpsSources feed the operator metrics: alarms, per-group circuits,
// destinations and the build. Nil ones are left out.
type OpsSources struct {
	// PointCodes writes the dpc labels (the configuration's format; zero:
	// numbers).
	PointCodes   mtp.PointCodeFormat
	Stack        func() stack.Snapshot
	Alarms       func() []ActiveAlarm
	Destinations func() []Destination
}

// ActiveAlarm is an alarm raised and not cleared (number as the docs write
// it, dpc "" when the alarm has none).
type ActiveAlarm struct {
	Number uint16
	DPC    string
}

// Destination is an adjacent exchange's availability and MTP congestion.
type Destination struct {
	Group     string
	DPC       uint32
	Available bool
	// Congestion is the MTP congestion level the network reports (SCON:
	// ANSI 0-3, ITU 1 while congested), 0 none.
	Congestion uint8
}

// GroupStates are the series isupgw_group_circuits always has per group.
var GroupStates = []string{"idle", "outgoing_busy", "incoming_busy", "releasing", "locally_blocked", "remotely_blocked", "awaiting_ack"}

var opsDefs = []struct {
	name, help string
	labels     []string
}{
	{"isupgw_alarm_active", "Active (lasting, not yet cleared) alarms, by number (hex, as docs/host-api.md writes them) and point code.", []string{"number", "dpc"}},
	{"isupgw_group_circuits", "Circuits of each circuit group by state; every state is present, at zero when none.", []string{"group", "dpc", "state"}},
	{"isupgw_destination_available", "1 when the adjacent exchange is reachable (MTP resume), 0 when paused.", []string{"group", "dpc"}},
	{"isupgw_destination_congestion_level", "MTP congestion level towards the adjacent exchange (M3UA SCON), 0 none.", []string{"group", "dpc"}},
	{"isupgw_build_info", "Always 1: the running build's version, VCS commit and Go version.", []string{"version", "commit", "go_version"}},
}

type opsCollector struct {
	src   OpsSources
	descs map[string]*prometheus.Desc
	build [3]string
}

// NewOpsCollector returns the operator metrics' collector.
func NewOpsCollector(src OpsSources) prometheus.Collector {
	c := &opsCollector{src: src, descs: map[string]*prometheus.Desc{}, build: buildInfo()}
	for _, d := range opsDefs {
		c.descs[d.name] = prometheus.NewDesc(d.name, d.help, d.labels, nil)
	}
	return c
}

// OpsNames lists the operator metrics (for the documentation test).
func OpsNames() []string {
	out := make([]string, len(opsDefs))
	for i, d := range opsDefs {
		out[i] = d.name
	}
	return out
}

func buildInfo() [3]string {
	b := [3]string{"unknown", "unknown", "unknown"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b[0], b[2] = bi.Main.Version, bi.GoVersion
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			b[1] = s.Value
		}
	}
	return b
}

func (c *opsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *opsCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(name string, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.GaugeValue, v, labels...)
	}
	gauge("isupgw_build_info", 1, c.build[:]...)
	if c.src.Alarms != nil {
		type key struct{ number, dpc string }
		n := map[key]int{}
		for _, a := range c.src.Alarms() {
			n[key{fmt.Sprintf("0x%02X", a.Number), a.DPC}]++
		}
		for k, v := range n {
			gauge("isupgw_alarm_active", float64(v), k.number, k.dpc)
		}
	}
	if c.src.Stack != nil {
		for _, g := range c.src.Stack().Groups {
			dpc := c.src.PointCodes.Format(mtp.PointCode(g.DPC))
			for i, v := range []int{g.Idle, g.Outgoing, g.Incoming, g.Releasing, g.LocallyBlocked, g.RemBlocked, g.Awaiting} {
				gauge("isupgw_group_circuits", float64(v), g.Group, dpc, GroupStates[i])
			}
		}
	}
	if c.src.Destinations != nil {
		for _, d := range c.src.Destinations() {
			dpc := c.src.PointCodes.Format(mtp.PointCode(d.DPC))
			gauge("isupgw_destination_available", b2f(d.Available), d.Group, dpc)
			gauge("isupgw_destination_congestion_level", float64(d.Congestion), d.Group, dpc)
		}
	}
}

// Join serves several collectors as one (Handler takes one).
func Join(cs ...prometheus.Collector) prometheus.Collector { return joined(cs) }

type joined []prometheus.Collector

func (j joined) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range j {
		c.Describe(ch)
	}
}

func (j joined) Collect(ch chan<- prometheus.Metric) {
	for _, c := range j {
		c.Collect(ch)
	}
}
