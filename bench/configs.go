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

// Mode is how a pair of gateways is configured for congestion.
type Mode string

// Modes, in the order the benchmark runs them.
const (
	// ModeShipped is the shipped configuration unchanged: no congestion or
	// code_yellow section (only addresses, circuits and the benchmark's
	// plumbing), so the adaptive admission runs with its defaults.
	ModeShipped Mode = "shipped"
	// ModeCooperative is ModeShipped with a cooperative load generator
	// (isupgw load --cooperative): it backs off on 0x0C and high-traffic
	// refusals as the CSP asks hosts to.
	ModeCooperative Mode = "cooperative"
	// ModeOn, ModeThrottle and ModeOff are the earlier modes, kept for
	// comparison: tuned probe thresholds, the adaptive admission off.
	// ModeOn is congestion control on with the product's default level-1
	// policy: refuse every new outgoing call (the CSP procedure).
	ModeOn Mode = "on"
	// ModeThrottle is control on with the level-1 throttle
	// (congestion.level1_outseize: throttle).
	ModeThrottle Mode = "throttle"
	// ModeOff is control off: thresholds at their maxima, ACC and Code
	// Yellow off.
	ModeOff Mode = "off"
)

// Modes are all the modes.
var Modes = []Mode{ModeShipped, ModeCooperative, ModeOn, ModeThrottle, ModeOff}

// Shipped reports whether the mode runs the shipped congestion settings.
func (m Mode) Shipped() bool { return m == ModeShipped || m == ModeCooperative }

// Control reports whether congestion control is on in the mode.
func (m Mode) Control() bool { return m != ModeOff }

// Settings are the knobs written into the generated configurations.
type Settings struct {
	Mode     Mode
	CICs     int
	Token    string
	Probe    string // probe interval, e.g. 100ms
	L1Delay  string
	L1Avg    string
	ClearAvg string
	AvgOver  int
	// Throttle is the level-1 throttle's target wait in ModeThrottle ("":
	// the product's default, halfway between the clear and level-1
	// averages).
	Throttle string
	// Code Yellow (control on only).
	YellowSample int
	YellowEntry  string
	QueueSize    int // per-host send queue (lines)
}

// DefaultSettings are the benchmark's congestion settings with control on:
// the product defaults are seconds of queue delay, meant for a real exchange;
// a benchmark step lasts seconds, so the probe is 100 ms and level 1 is at
// tens of milliseconds of queue delay.
func DefaultSettings(mode Mode) Settings {
	return Settings{Mode: mode, CICs: 4000, Token: "bench", Probe: "100ms", L1Delay: "50ms", L1Avg: "30ms", ClearAvg: "10ms",
		AvgOver: 3, YellowSample: 10, YellowEntry: "200ms", QueueSize: 65536}
}

// congestion is the congestion and code_yellow sections.
func (s Settings) congestion() string {
	if s.Mode.Shipped() {
		return ""
	}
	if !s.Mode.Control() {
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
  admission: {enabled: false}
code_yellow: {enabled: false}
`, s.Probe, s.AvgOver)
	}
	return fmt.Sprintf(`congestion:
  probe_interval: %s
  average_over: %d
  level1_delay: %s
  level1_average: %s
  clear_average: %s
  level1_outseize: %s
%s  acc: {mode: auto, duration: 1s}
  admission: {enabled: false}
code_yellow: {enabled: true, sample_size: %d, entry_latency: %s, exit_percent: 40}
`, s.Probe, s.AvgOver, s.L1Delay, s.L1Avg, s.ClearAvg, s.level1(), s.throttleLine(), s.YellowSample, s.YellowEntry)
}

func (s Settings) level1() string {
	if s.Mode == ModeThrottle {
		return "throttle"
	}
	return "refuse"
}

func (s Settings) throttleLine() string {
	if s.Mode != ModeThrottle || s.Throttle == "" {
		return ""
	}
	return fmt.Sprintf("  throttle_target: %s\n", s.Throttle)
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
`, s.Mode, p.AUDP) + common(1, 2, "b", p.AHost, p.AMetric)
	b = fmt.Sprintf(`# isupgw bench: gateway B (control %s)
m3ua:
  transport: udp
  udp_port: %d
  peers: [{name: a, connect: 127.0.0.1:2905, udp_port: %d, point_codes: [1]}]
`, s.Mode, p.BUDP, p.AUDP) + common(2, 1, "a", p.BHost, p.BMetr)
	return a, b
}
