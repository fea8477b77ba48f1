package config

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/mtp/transport"
	"github.com/isupgw/isupgw/sprc"
)

func TestEmbeddedDefaultLoads(t *testing.T) {
	cfg, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	g := cfg.Gateway
	if g.Stack.OPC != 1 || len(g.Stack.Groups) != 1 || g.Stack.Groups[0].DPC != 2 || g.M3UA.Role != m3ua.RoleIPSP {
		t.Fatalf("default: %+v", g)
	}
	if !g.M3UA.Listen.Addr().IsLoopback() || !strings.HasPrefix(cfg.Host.TCP, "127.0.0.1:") || !strings.HasPrefix(cfg.MetricsAddr, "127.0.0.1:") {
		t.Fatalf("the default must bind to loopback only: %v %s %s", g.M3UA.Listen, cfg.Host.TCP, cfg.MetricsAddr)
	}
	if cfg.Host.Token == "" || !cfg.TokenGenerated {
		t.Fatal("the default must generate a host API token")
	}
	if g.M3UA.Transport == transport.KindAuto || g.M3UA.Transport != cfg.Transport {
		t.Fatalf("M3UA transport %v, resolved %v: auto must be resolved once for the endpoint", g.M3UA.Transport, cfg.Transport)
	}
}

const full = `
point_code: 2-100-3
network_indicator: international
variant: itu
m3ua:
  role: asp
  transport: udp
  network_appearance: 7
  peers:
    - name: stp-a
      connect: 127.0.0.1:2906
      asp_id: 11
      routing_contexts: [100, 101]
      traffic_mode: override
      point_codes: [2, "0-0-5"]
    - name: stp-b
      connect: "[::1]:2906"
      default_route: true
circuit_groups:
  - name: b
    point_code: 2
    cics: ["1-31", 33, "40-41"]
    direction: outgoing
    glare: even
  - name: c
    point_code: 0-0-5
    variant: ansi
    cics: ["1-16383"]
reset_on_start: false
state_file: /tmp/state.json
timers: {t1: 30s, t7: 25s, t9: 2m}
congestion:
  probe_interval: 500ms
  level1_delay: 8s
  acc: {mode: report, admit: [0.6, 0.2, 0], duration: 10s}
  mtp: {t29: 400ms, t30: 6s, steps: [1, 0.5]}
  availability: {t7_failures: 5, ping: true}
  constraints:
    - {point_code: 2, max_calls: 100, burst_rate: 10, burst_window: 1s}
code_yellow: {enabled: false, entry_latency: 50ms, duration: 30m, dump_dir: /var/tmp}
host_api:
  tcp: 127.0.0.1:7701
  unix: /tmp/isupgw.sock
  token: secret
  hello_timeout: 2s
  max_pre_hello: 16
  max_pending: 100
  incoming:
    - {prefix: "49", route: b, app: ivr}
metrics: 127.0.0.1:9701
capture: /tmp/x.pcap
log: {level: debug, format: console}
`

func TestFullConfig(t *testing.T) {
	cfg, err := Parse("full.yaml", []byte(full))
	if err != nil {
		t.Fatal(err)
	}
	s, m := cfg.Gateway.Stack, cfg.Gateway.M3UA
	// Written 3-8-3: every part shows and reads point codes so.
	if want := (mtp.PointCodeFormat{Dashed: true}); cfg.PointCodes != want || s.PointCodes != want || cfg.Host.PointCodes != want || cfg.Congestion.PointCodes != want {
		t.Errorf("point code format %+v (stack %+v, host %+v, congestion %+v), want 3-8-3", cfg.PointCodes, s.PointCodes, cfg.Host.PointCodes, cfg.Congestion.PointCodes)
	}
	if s.OPC != 2<<11|100<<3|3 || s.NI != 0 || s.ResetOnStart || s.StateFile != "/tmp/state.json" {
		t.Fatalf("stack %+v", s)
	}
	b := s.Groups[0]
	if b.Direction != stack.OutgoingOnly || b.Glare != stack.GlareEven || len(b.CICs) != 3 || b.CICs[1] != (stack.CICRange{First: 33, Last: 33}) {
		t.Fatalf("group b %+v", b)
	}
	if c := s.Groups[1]; c.Variant != isup.ANSI || c.DPC != 5 || c.CICs[0].Last != 16383 {
		t.Fatalf("group c %+v", c)
	}
	if s.Timers.T1 != 30*time.Second || s.Timers.T9 != 2*time.Minute || s.Timers.T5 != 0 {
		t.Fatalf("timers %+v", s.Timers)
	}
	p := m.Peers[0]
	if m.Role != m3ua.RoleASP || !m.HasNetworkAppearance || p.Dial != netip.MustParseAddrPort("127.0.0.1:9899") || p.ASPID != 11 ||
		p.TrafficMode != mtp.Override || len(p.DPCs) != 2 || p.DPCs[1] != 5 || !m.Peers[1].Default {
		t.Fatalf("m3ua %+v", m)
	}
	c := cfg.Congestion
	if c.ProbeInterval != 500*time.Millisecond || c.ACC.Mode != sprc.ACCReport || c.ACC.Admit[0] != 0.6 || c.Availability.T7Failures != 5 ||
		!c.Availability.Ping || c.CodeYellow.Enabled || c.CodeYellow.Duration != 30*time.Minute || len(c.Constraints) != 1 || c.Constraints[0].BurstRate != 10 {
		t.Fatalf("congestion %+v", c)
	}
	if cfg.Host.Token != "secret" || cfg.TokenGenerated || cfg.Host.Rules[0].Route != "b" || cfg.Host.HelloTimeout != 2*time.Second || cfg.Host.MaxPreHello != 16 || cfg.Host.MaxPending != 100 || cfg.MetricsAddr != "127.0.0.1:9701" ||
		cfg.CapturePath != "/tmp/x.pcap" || cfg.LogFormat != "console" || cfg.DumpDir != "/var/tmp" {
		t.Fatalf("rest %+v", cfg)
	}
}

// TestBrokenFiles: each broken file gives the expected message, naming the
// file, the line and the field.
func TestBrokenFiles(t *testing.T) {
	base := `point_code: 1
m3ua:
  listen: 127.0.0.1:2905
  peers:
    - name: b
      accept_from: 127.0.0.1
      point_codes: [2]
circuit_groups:
  - name: b
    point_code: 2
    cics: ["1-31"]
`
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown field", base + "colour: blue\n", `x.yaml:12: colour: unknown field "colour" (want one of point_code, network_indicator, variant, m3ua, mtp3, circuit_groups,`},
		{"misspelt nested field", strings.Replace(base, "    cics:", "    cic:", 1), `x.yaml:11: circuit_groups[0].cic: unknown field "cic" (did you mean cics?)`},
		{"bad point code", strings.Replace(base, "point_code: 1\n", "point_code: 1-2\n", 1), `x.yaml:1: point_code: "1-2" is not a point code`},
		{"point code too big", strings.Replace(base, "point_code: 1\n", "point_code: 20000\n", 1), `x.yaml:1: point_code: point code 20000 is out of range (want 1-16383)`},
		{"own point code as group", strings.Replace(base, "    point_code: 2", "    point_code: 1", 1), `x.yaml:10: circuit_groups[0].point_code: 1 is our own point code`},
		{"reversed CICs", strings.Replace(base, `"1-31"`, `"31-1"`, 1), `x.yaml:11: circuit_groups[0].cics[0]: CIC range "31-1" is reversed (want first <= last)`},
		{"CIC beyond ITU", strings.Replace(base, `"1-31"`, `"1-5000"`, 1), `x.yaml:11: circuit_groups[0].cics[0]: CIC 5000 exceeds the itu maximum 4095`},
		{"bad transport", strings.Replace(base, "  listen:", "  transport: tcp\n  listen:", 1), `x.yaml:3: m3ua.transport: "tcp" is not a valid transport (want one of auto, kernel, raw, udp)`},
		{"bad address", strings.Replace(base, "127.0.0.1:2905", "localhost:2905", 1), `x.yaml:3: m3ua.listen: "localhost:2905" is not an IP address with port`},
		{"peer without address", strings.Replace(base, "      accept_from: 127.0.0.1\n", "", 1), `x.yaml:5: m3ua.peers[0]: neither connect nor accept_from`},
		{"unrouted group", strings.Replace(base, "point_codes: [2]", "point_codes: [3]", 1), `x.yaml:10: circuit_groups[0].point_code: no m3ua peer routes point code 2`},
		{"bad duration", base + "timers: {t7: soon}\n", `x.yaml:12: timers.t7: "soon" is not a duration`},
		{"level 1 above level 2", base + "congestion: {level1_delay: 20s}\n", `x.yaml:12: congestion: level 1 thresholds (20s, average 5s) must not exceed the fixed level 2 ones`},
		{"bad level 1 policy", base + "congestion: {level1_outseize: gap}\n", `x.yaml:12: congestion.level1_outseize: "gap" is not a valid level 1 outseize policy (want one of refuse, throttle)`},
		{"throttle target without throttle", base + "congestion: {throttle_target: 2s}\n", `x.yaml:12: congestion.throttle_target: set, but level1_outseize is refuse`},
		{"throttle target below clear", base + "congestion: {level1_outseize: throttle, throttle_target: 500ms}\n", `congestion: throttle target 500ms must lie above the clear average 1s`},
		{"admission minimum", base + "congestion: {admission: {min_limit: -1}}\n", `x.yaml:12: congestion: admission limits: minimum -1`},
		{"admission smoothing", base + "congestion: {admission: {smoothing: 2}}\n", `congestion: admission smoothing 2`},
		{"ACC admit count", base + "congestion: {acc: {admit: [0.5]}}\n", `x.yaml:12: congestion.acc.admit: 1 values (want 3`},
		{"no groups", strings.Split(base, "circuit_groups:")[0], `x.yaml: circuit_groups: missing (want at least one circuit group)`},
		{"duplicate group", base + "  - name: b\n    point_code: 3\n    cics: [1]\n", `x.yaml:12: circuit_groups[1].name: "b" is used by another circuit group`},
		{"bad log format", base + "log: {format: xml}\n", `x.yaml:12: log.format: "xml" (want json or console)`},
		{"rule on unknown route", base + "host_api: {incoming: [{route: z}]}\n", `x.yaml:12: host_api.incoming[0].route: "z" is not a circuit group`},
		{"rule with bad prefix", base + "host_api: {incoming: [{prefix: 4x}]}\n", `x.yaml:12: host_api.incoming[0].prefix: "4x": `},
		{"not YAML", "point_code: [1\n", `x.yaml: yaml: line 1: did not find expected ',' or ']'`},
		{"list where value", strings.Replace(base, "point_code: 1\n", "point_code: [1]\n", 1), `x.yaml:1: point_code: want a point code (a number, or 3-8-3 / 8-8-8), got a list`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatalf("no error; want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error:\n%v\nwant it to contain:\n%s", err, tc.want)
			}
		})
	}
	if _, err := Parse("x.yaml", []byte(base)); err != nil {
		t.Fatalf("the base file itself is broken: %v", err)
	}
}

// A check lists every error of the file at once, in the file's order, each
// with its line and field: misspelt fields with the field meant (and not that
// field again as missing), values of the wrong type with the type wanted, and
// what the validation finds in the fields that did decode.
func TestEveryErrorAtOnce(t *testing.T) {
	y := `pointcode: 1
m3ua:
  listen: 127.0.0.1:2905
  peers:
    - {name: b, accept_from: 127.0.0.1, point_codes: [2]}
circuit_groups:
  - name: b
    point_code: 2
    cics: ["31-1"]
  - name: b
    point_code: 3
    cics: [1]
timers: {t1: 15s, t7: 20 seconds}
congestion:
  average_over: ten
  level1_outseize: drop
host_api:
  queue_size: [1]
  no_auth: maybe
  max_host: 3
log: {level: loud}
`
	_, err := Parse("x.yaml", []byte(y))
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		`x.yaml:1: pointcode: unknown field "pointcode" (did you mean point_code?)`,
		`x.yaml:9: circuit_groups[0].cics[0]: CIC range "31-1" is reversed (want first <= last)`,
		`x.yaml:10: circuit_groups[1].name: "b" is used by another circuit group`,
		"x.yaml:11: circuit_groups[1].point_code: no m3ua peer routes point code 3 (add it to a peer's point_codes, mark a peer default_route, or route it through an mtp3 linkset)",
		`x.yaml:13: timers.t7: "20 seconds" is not a duration (want e.g. 500ms, 15s, 5m)`,
		`x.yaml:15: congestion.average_over: want a whole number, got "ten"`,
		`x.yaml:16: congestion.level1_outseize: "drop" is not a valid level 1 outseize policy (want one of refuse, throttle)`,
		`x.yaml:18: host_api.queue_size: want a whole number, got a list`,
		`x.yaml:19: host_api.no_auth: want true or false, got "maybe"`,
		`x.yaml:20: host_api.max_host: unknown field "max_host" (did you mean max_hosts?)`,
		`x.yaml:21: log.level: "loud" (want debug, info, warn or error)`,
	}
	if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", err, strings.Join(want, "\n"))
	}
}

func TestTypeWords(t *testing.T) {
	for _, tc := range []struct{ goType, want string }{
		{"int", "a whole number"}, {"uint16", "a whole number"}, {"*uint32", "a whole number"}, {"float64", "a number"},
		{"bool", "true or false"}, {"*bool", "true or false"}, {"string", "a text value"}, {"[]uint32", "a list"},
		{"[]config.Peer", "a list"}, {"config.M3UA", "a section (field: value lines)"},
	} {
		if got := typeWords(tc.goType); got != tc.want {
			t.Errorf("typeWords(%s) = %q, want %q", tc.goType, got, tc.want)
		}
	}
}

func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	tf := filepath.Join(dir, "token")
	if err := os.WriteFile(tf, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(DefaultYAML()), "host_api:\n", "host_api:\n  token_file: "+tf+"\n", 1)
	cfg, err := Parse("t.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host.Token != "s3cret" || cfg.TokenGenerated {
		t.Fatalf("token %q", cfg.Host.Token)
	}
	// ISUPGW_TOKEN wins, and a token_file that is not there is then no error.
	t.Setenv(TokenEnv, "from-env")
	y = strings.Replace(string(DefaultYAML()), "host_api:\n", "host_api:\n  token_file: "+filepath.Join(dir, "absent")+"\n", 1)
	if cfg, err := Parse("t.yaml", []byte(y)); err != nil || cfg.Host.Token != "from-env" || cfg.TokenGenerated {
		t.Fatalf("with %s: err %v, token %q", TokenEnv, err, cfg.Host.Token)
	}
	t.Setenv(TokenEnv, "")
	if _, err := Parse("t.yaml", []byte(y)); err == nil || !strings.Contains(err.Error(), "host_api.token_file") {
		t.Fatalf("without %s a missing token file must be an error: %v", TokenEnv, err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestSCTPOverUDPPorts(t *testing.T) {
	y := `point_code: 1
m3ua:
  transport: udp
  listen: 127.0.0.1:2905
  udp_port: 19899
  peers:
    - {name: a, connect: 127.0.0.2:2905, point_codes: [2]}
    - {name: b, connect: 127.0.0.3:2905, udp_port: 29899, point_codes: [3]}
circuit_groups:
  - {name: a, point_code: 2, cics: [1]}
  - {name: b, point_code: 3, cics: [1]}
`
	cfg, err := Parse("u.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	m := cfg.Gateway.M3UA
	if m.Listen != netip.MustParseAddrPort("127.0.0.1:19899") || m.Peers[0].Dial != netip.MustParseAddrPort("127.0.0.2:19899") ||
		m.Peers[1].Dial != netip.MustParseAddrPort("127.0.0.3:29899") || len(cfg.M3UAOptions) != 3 { // SCTP ports, heartbeat, path failure
		t.Fatalf("UDP encapsulation: %+v", m)
	}
	// The default listens on UDP 9899 here (no kernel SCTP on this machine).
	d, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if d.Transport.String() == "udp" && d.Gateway.M3UA.Listen.Port() != 9899 {
		t.Fatalf("default over UDP listens on %v", d.Gateway.M3UA.Listen)
	}
	bad := strings.Replace(y, "127.0.0.3:2905", "127.0.0.3:2906", 1)
	if _, err := Parse("u.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "must use the same SCTP port") {
		t.Fatalf("different SCTP ports: %v", err)
	}
}

// TestReferenceExample keeps examples/isupgw.yaml, the configuration reference,
// loadable.
func TestReferenceExample(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "isupgw.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(b), "token_file: /etc/isupgw/token", "token: x", 1)
	cfg, err := Parse("examples/isupgw.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Gateway.Stack.Groups) != 2 || len(cfg.Congestion.Constraints) != 1 || len(cfg.Host.Rules) != 2 {
		t.Fatalf("reference example read as %+v", cfg)
	}
	// It binds loopback only, as the defaults do; its comments say how to
	// expose each part.
	for what, addr := range map[string]string{"m3ua.listen": cfg.Gateway.M3UA.Listen.Addr().String(),
		"host_api.tcp": cfg.Host.TCP, "metrics": cfg.MetricsAddr} {
		if !strings.HasPrefix(addr, "127.0.0.1") {
			t.Errorf("the reference example binds %s to %s, want loopback", what, addr)
		}
	}
}

// TestLocalAddress: m3ua.local makes dialed associations start from a fixed
// address and SCTP port (an STP such as osmo-stp tells its ASPs apart by
// it): over UDP the SCTP header carries the port, raw binds the address.
func TestLocalAddress(t *testing.T) {
	const y = `point_code: 1
m3ua:
  role: asp
  transport: %s
  local: %s
  peers: [{name: stp, connect: %s, udp_port: %d, point_codes: [2]}]
circuit_groups: [{name: b, point_code: 2, cics: [1]}]
`
	dialFrom := func(t *testing.T, kind transport.Kind, local string, peerSCTP uint16) netip.AddrPort {
		t.Helper()
		var lopts []transport.Option
		listen := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), peerSCTP)
		udp := uint16(0)
		if kind == transport.KindUDP {
			// The SCTP port travels inside datagrams to a free UDP port.
			pc, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			udp = uint16(pc.LocalAddr().(*net.UDPAddr).Port)
			pc.Close()
			listen = netip.AddrPortFrom(listen.Addr(), udp)
			lopts = append(lopts, transport.WithSCTPPorts(peerSCTP, 0))
		}
		ln, err := transport.Listen(kind, listen, lopts...)
		if err != nil {
			t.Skipf("%v listener: %v", kind, err)
		}
		defer ln.Close()
		cfg, err := Parse("l.yaml", []byte(fmt.Sprintf(y, kind, local, ln.Addr(), udp)))
		if err != nil {
			t.Fatal(err)
		}
		ep, err := m3ua.New(cfg.Gateway.M3UA, cfg.M3UAOptions...)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ep.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = ep.Close(context.Background()) }()
		c, err := ln.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.RemoteAddr()
	}
	t.Run("udp", func(t *testing.T) {
		if got := dialFrom(t, transport.KindUDP, "127.0.0.1:2911", 2905); got != netip.MustParseAddrPort("127.0.0.1:2911") {
			t.Errorf("association from %v, want 127.0.0.1:2911", got)
		}
	})
	t.Run("raw", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("raw SCTP needs root")
		}
		if got := dialFrom(t, transport.KindRaw, "127.0.0.1:2912", 2906); got != netip.MustParseAddrPort("127.0.0.1:2912") {
			t.Errorf("association from %v, want 127.0.0.1:2912", got)
		}
	})
	// Over UDP the listener and the dialed associations share one SCTP port.
	bad := strings.Replace(fmt.Sprintf(y, "udp", "127.0.0.1:2911", "127.0.0.2:2905", 9899), "  local:", "  listen: 127.0.0.1:2905\n  local:", 1)
	if _, err := Parse("l.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "m3ua.local: SCTP port 2911 differs from listen's 2905") {
		t.Errorf("local and listen ports differ over UDP: %v", err)
	}
	// Port 0 over UDP keeps the default SCTP port (2905) and binds the address
	// (two options, beside the heartbeat and the SCTP path failure).
	if cfg, err := Parse("l.yaml", []byte(fmt.Sprintf(y, "udp", "127.0.0.1:0", "127.0.0.2:2905", 9899))); err != nil || len(cfg.M3UAOptions) != 4 {
		t.Errorf("local with port 0: %v", err)
	}
}

// TestLivenessSettings: peer liveness is on by default (heartbeat 1 s / 3 s,
// SCTP path failure after 4 retransmissions with RTO.Max 1 s), can be set or
// turned off, and bad values are refused with the field named.
func TestLivenessSettings(t *testing.T) {
	def, err := Parse("d.yaml", DefaultYAML())
	if err != nil {
		t.Fatal(err)
	}
	want := Liveness{BeatInterval: time.Second, BeatTimeout: 3 * time.Second, MaxRetrans: 4, RTOMax: time.Second}
	if def.Liveness != want {
		t.Fatalf("embedded default %+v, want %+v", def.Liveness, want)
	}
	base := string(DefaultYAML())
	cut := base[:strings.Index(base, "  heartbeat:")] + base[strings.Index(base, "  peers:"):]
	unset, err := Parse("u.yaml", []byte(cut))
	if err != nil {
		t.Fatal(err)
	}
	if unset.Liveness != want {
		t.Fatalf("no liveness settings: %+v, want the defaults %+v", unset.Liveness, want)
	}
	set := strings.Replace(cut, "  peers:", "  heartbeat: {interval: 0s}\n  sctp: {max_retransmissions: 0, rto_max: 500ms}\n  peers:", 1)
	off, err := Parse("o.yaml", []byte(set))
	if err != nil {
		t.Fatal(err)
	}
	if off.Liveness.BeatInterval != 0 || off.Liveness.MaxRetrans != 0 || off.Liveness.RTOMax != 500*time.Millisecond {
		t.Fatalf("explicit settings %+v", off.Liveness)
	}
	for _, c := range []struct{ yaml, want string }{
		{"  heartbeat: {interval: 2s, timeout: 1s}\n", "m3ua.heartbeat.timeout: 1s is shorter than the interval 2s"},
		{"  heartbeat: {interval: -1s}\n", `m3ua.heartbeat.interval: "-1s" is not a duration`},
		{"  sctp: {max_retransmissions: -1}\n", "m3ua.sctp.max_retransmissions: -1"},
		{"  sctp: {rto_max: 1ms}\n", "m3ua.sctp.rto_max: 1ms"},
	} {
		_, err := Parse("b.yaml", []byte(strings.Replace(cut, "  peers:", c.yaml+"  peers:", 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.yaml, err, c.want)
		}
	}
}

// TestAdmissionSettings: the adaptive admission is on by default, with the
// package's defaults, and the file sets or disables it.
func TestAdmissionSettings(t *testing.T) {
	cfg, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if a := cfg.Congestion.Admission; !a.Enabled {
		t.Errorf("admission off by default: %+v", a)
	}
	base := `point_code: 1
m3ua:
  listen: 127.0.0.1:2905
  peers:
    - name: b
      accept_from: 127.0.0.1
      point_codes: [2]
circuit_groups:
  - name: b
    point_code: 2
    cics: ["1-31"]
`
	cfg, err = Parse("a.yaml", []byte(base+"congestion: {admission: {target: 50ms, min_limit: 2, initial_limit: 30, window: 200ms}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a := cfg.Congestion.Admission; !a.Enabled || a.Target != 50*time.Millisecond || a.MinLimit != 2 || a.InitialLimit != 30 || a.Window != 200*time.Millisecond {
		t.Errorf("admission %+v", a)
	}
	cfg, err = Parse("a.yaml", []byte(base+"congestion: {admission: {enabled: false}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Congestion.Admission.Enabled {
		t.Error("admission: {enabled: false} left it on")
	}
}
