package bench

import (
	"fmt"
	"strings"
)

// Ports are the loopback ports of one pair of gateways.
type Ports struct {
	AUDP, BUDP     int // SCTP over UDP datagram ports
	AHost, BHost   int // host API
	AMetric, BMetr int // metrics and status
}

// Settings are the knobs written into the generated configurations.
type Settings struct {
	Control  bool // congestion control on (else: thresholds at their maxima, ACC and Code Yellow off)
	CICs     int
	Token    string
	Probe    string // probe interval, e.g. 100ms
	L1Delay  string
	L1Avg    string
	ClearAvg string
	AvgOver  int
	// Code Yellow (control on only).
	YellowSample int
	YellowEntry  string
	QueueSize    int // per-host send queue (lines)
}

// DefaultSettings are the benchmark's congestion settings with control on:
// the product defaults are seconds of queue delay, meant for a real exchange;
// a benchmark step lasts seconds, so the probe is 100 ms and level 1 is at
// tens of milliseconds of queue delay.
func DefaultSettings(control bool) Settings {
	return Settings{Control: control, CICs: 4000, Token: "bench", Probe: "100ms", L1Delay: "50ms", L1Avg: "30ms", ClearAvg: "10ms",
		AvgOver: 3, YellowSample: 10, YellowEntry: "200ms", QueueSize: 65536}
}

// congestion is the congestion and code_yellow sections.
func (s Settings) congestion() string {
	if !s.Control {
		// Level 1 at the fixed level 2 thresholds (12 s delay, 6 s average:
		// level 2 itself cannot be switched off), ACC off, no out-of-service
		// declarations, Code Yellow off.
		return fmt.Sprintf(`congestion:
  probe_interval: %s
  average_over: %d
  level1_delay: 12s
  level1_average: 6s
  clear_average: 1s
  acc: {mode: "off"}
  availability: {t7_failures: 0}
code_yellow: {enabled: false}
`, s.Probe, s.AvgOver)
	}
	return fmt.Sprintf(`congestion:
  probe_interval: %s
  average_over: %d
  level1_delay: %s
  level1_average: %s
  clear_average: %s
  acc: {mode: auto, duration: 1s}
code_yellow: {enabled: true, sample_size: %d, entry_latency: %s, exit_percent: 40}
`, s.Probe, s.AvgOver, s.L1Delay, s.L1Avg, s.ClearAvg, s.YellowSample, s.YellowEntry)
}

// Configs returns the YAML of gateway A (point code 1, the one the load
// generator calls through; it listens) and B (point code 2, where the calls
// are answered; it dials A).
func Configs(s Settings, p Ports) (a, b string) {
	common := func(pc, peerPC int, name string, host, metrics int) string {
		var sb strings.Builder
		fmt.Fprintf(&sb, "point_code: %d\n", pc)
		fmt.Fprintf(&sb, "circuit_groups: [{name: %s, point_code: %d, cics: [\"1-%d\"]}]\n", name, peerPC, s.CICs)
		sb.WriteString("state_file: \"\"\n")
		sb.WriteString("timers: {t22: 500ms}\n") // the start-up GRS may race the peer's ASP Active: repeat it soon
		sb.WriteString(s.congestion())
		fmt.Fprintf(&sb, "host_api: {tcp: \"127.0.0.1:%d\", token: %s, queue_size: %d}\n", host, s.Token, s.QueueSize)
		fmt.Fprintf(&sb, "metrics: 127.0.0.1:%d\n", metrics)
		sb.WriteString("log: {level: warn}\n")
		return sb.String()
	}
	a = fmt.Sprintf(`# isupgw bench: gateway A (control %s)
m3ua:
  transport: udp
  listen: 127.0.0.1:2905
  udp_port: %d
  peers: [{name: b, accept_from: 127.0.0.1, point_codes: [2]}]
`, onOff(s.Control), p.AUDP) + common(1, 2, "b", p.AHost, p.AMetric)
	b = fmt.Sprintf(`# isupgw bench: gateway B (control %s)
m3ua:
  transport: udp
  udp_port: %d
  peers: [{name: a, connect: 127.0.0.1:2905, udp_port: %d, point_codes: [1]}]
`, onOff(s.Control), p.BUDP, p.AUDP) + common(2, 1, "a", p.BHost, p.BMetr)
	return a, b
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
