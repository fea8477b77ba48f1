// Package config reads the gateway's YAML configuration file and turns it into
// the configurations of its parts (M3UA endpoint, ISUP stack, congestion
// control, host API, metrics, capture, logs). Every error names the file, the
// line and the field, and says what is expected.
package config

import (
	"bytes"
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/isupgw/isupgw/gateway"
	"github.com/isupgw/isupgw/host"
	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/mtp/transport"
	"github.com/isupgw/isupgw/sprc"
)

//go:embed default.yaml
var defaultYAML []byte

// DefaultYAML is the embedded configuration used when no file is given: one
// adjacent exchange on loopback.
func DefaultYAML() []byte { return append([]byte(nil), defaultYAML...) }

// File mirrors the YAML file. The README's configuration reference documents
// every field.
type File struct {
	PointCode        PointCode      `yaml:"point_code"`
	NetworkIndicator NI             `yaml:"network_indicator"`
	Variant          Variant        `yaml:"variant"`
	M3UA             M3UA           `yaml:"m3ua"`
	MTP3             MTP3           `yaml:"mtp3"`
	CircuitGroups    []CircuitGroup `yaml:"circuit_groups"`
	ResetOnStart     *bool          `yaml:"reset_on_start"`
	ResetOnResume    bool           `yaml:"reset_on_resume"`
	StateFile        string         `yaml:"state_file"`
	Redundancy       Redundancy     `yaml:"redundancy"`
	Timers           Timers         `yaml:"timers"`
	Congestion       Congestion     `yaml:"congestion"`
	CodeYellow       CodeYellow     `yaml:"code_yellow"`
	HostAPI          HostAPI        `yaml:"host_api"`
	Metrics          string         `yaml:"metrics"`
	Capture          string         `yaml:"capture"`
	Log              Log            `yaml:"log"`
}

// Redundancy is the gateway's place in an active/standby pair
// (docs/deployment.md). Mode "single" (default) or "active-standby": the
// gateway is one of two ASPs of one AS in override mode at the STP, every
// m3ua peer is standby-capable, and state_file should name a file both
// instances share so a maintenance block survives a failover.
type Redundancy struct {
	Mode string `yaml:"mode"`
}

// M3UA is the SIGTRAN side.
type M3UA struct {
	Role              Role        `yaml:"role"`
	Transport         Transport   `yaml:"transport"`
	Listen            *AddrPort   `yaml:"listen"`
	DoubleExchange    bool        `yaml:"double_exchange"`
	NetworkAppearance *uint32     `yaml:"network_appearance"`
	RouteMode         TrafficMode `yaml:"route_mode"`
	// UDPPort is the UDP port of SCTP over UDP (RFC 6951; default 9899). With the
	// udp transport (or auto without kernel SCTP) listen and connect give the
	// SCTP addresses, and the datagrams use this port.
	UDPPort uint16 `yaml:"udp_port"`
	// Local is the address the associations we dial start from: the raw and
	// kernel transports bind it (port 0: any port); over UDP the datagrams
	// leave from its IP address and the SCTP header carries its port. An STP
	// that tells its ASPs apart by their SCTP port (osmo-stp) needs it.
	Local *AddrPort `yaml:"local"`
	Peers []Peer    `yaml:"peers"`
	// Heartbeat and SCTP are the peer liveness checks (on by default).
	Heartbeat Heartbeat `yaml:"heartbeat"`
	SCTP      SCTP      `yaml:"sctp"`
}

// Heartbeat is M3UA BEAT (RFC 4666 §4.3.4.6): a BEAT every interval; a peer
// heard nothing from for timeout is declared down. Interval 0 turns it off.
type Heartbeat struct {
	Interval *Duration `yaml:"interval"`
	Timeout  *Duration `yaml:"timeout"`
}

// SCTP bounds an unanswered association (RFC 9260 Association.Max.Retrans
// and RTO.Max); 0 keeps the SCTP stack's own default.
type SCTP struct {
	MaxRetransmissions *int      `yaml:"max_retransmissions"`
	RTOMax             *Duration `yaml:"rto_max"`
}

// Liveness is how a dead or hung peer is noticed: M3UA heartbeat (interval 0:
// off) and SCTP path failure (0: the SCTP stack's default).
type Liveness struct {
	BeatInterval, BeatTimeout time.Duration
	MaxRetrans                int
	RTOMax                    time.Duration
}

// Liveness defaults: a dead or hung peer is down within 3 to 4 s.
const (
	defaultMaxRetrans = 4
	defaultRTOMax     = time.Second
)

// Peer is one association and the point codes routed through it.
type Peer struct {
	Name            string      `yaml:"name"`
	Connect         *AddrPort   `yaml:"connect"`
	AcceptFrom      *Addr       `yaml:"accept_from"`
	ASPID           *uint32     `yaml:"asp_id"`
	RoutingContexts []uint32    `yaml:"routing_contexts"`
	TrafficMode     TrafficMode `yaml:"traffic_mode"`
	PointCodes      []PointCode `yaml:"point_codes"`
	DefaultRoute    bool        `yaml:"default_route"`
	// UDPPort is the peer's SCTP-over-UDP port when it differs from ours.
	UDPPort uint16 `yaml:"udp_port"`
}

// CircuitGroup is the circuits towards one adjacent exchange.
type CircuitGroup struct {
	Name      string    `yaml:"name"`
	PointCode PointCode `yaml:"point_code"`
	Variant   *Variant  `yaml:"variant"`
	CICs      CICRanges `yaml:"cics"`
	Direction Direction `yaml:"direction"`
	Glare     Glare     `yaml:"glare"`
}

// Timers are the ISUP timers; unset ones keep their defaults.
type Timers struct {
	T1  Duration `yaml:"t1"`
	T2  Duration `yaml:"t2"`
	T3  Duration `yaml:"t3"`
	T4  Duration `yaml:"t4"`
	T5  Duration `yaml:"t5"`
	T6  Duration `yaml:"t6"`
	T7  Duration `yaml:"t7"`
	T8  Duration `yaml:"t8"`
	T9  Duration `yaml:"t9"`
	T12 Duration `yaml:"t12"`
	T13 Duration `yaml:"t13"`
	T14 Duration `yaml:"t14"`
	T15 Duration `yaml:"t15"`
	T16 Duration `yaml:"t16"`
	T17 Duration `yaml:"t17"`
	T18 Duration `yaml:"t18"`
	T19 Duration `yaml:"t19"`
	T20 Duration `yaml:"t20"`
	T21 Duration `yaml:"t21"`
	T22 Duration `yaml:"t22"`
	T23 Duration `yaml:"t23"`
	T27 Duration `yaml:"t27"`
	T28 Duration `yaml:"t28"`
	T33 Duration `yaml:"t33"`
}

// Congestion is congestion and admission control.
type Congestion struct {
	ProbeInterval Duration `yaml:"probe_interval"`
	AverageOver   int      `yaml:"average_over"`
	Level1Delay   Duration `yaml:"level1_delay"`
	Level1Average Duration `yaml:"level1_average"`
	ClearAverage  Duration `yaml:"clear_average"`
	// Level1Outseize: refuse (default) or throttle; see sprc.Level1Policy.
	Level1Outseize Level1Policy  `yaml:"level1_outseize"`
	ThrottleTarget Duration      `yaml:"throttle_target"`
	Admission      Admission     `yaml:"admission"`
	ACC            ACC           `yaml:"acc"`
	MTP            MTPCongestion `yaml:"mtp"`
	Availability   Availability  `yaml:"availability"`
	Constraints    []Constraint  `yaml:"constraints"`
}

// Admission is the adaptive limit on calls in set-up (sprc.AdmissionConfig,
// docs/congestion.md); on unless enabled is false. Zero fields take the
// defaults.
type Admission struct {
	Enabled      *bool    `yaml:"enabled"`
	Target       Duration `yaml:"target"`
	InitialLimit int      `yaml:"initial_limit"`
	MinLimit     int      `yaml:"min_limit"`
	MaxLimit     int      `yaml:"max_limit"`
	Smoothing    float64  `yaml:"smoothing"`
	Window       Duration `yaml:"window"`
	Baseline     Duration `yaml:"baseline"`
	FirstProbe   Duration `yaml:"first_probe"`
	Hold         Duration `yaml:"hold"`
	ClearAfter   Duration `yaml:"clear_after"`
}

// ACC is automatic congestion control on received ACL.
type ACC struct {
	Mode     ACCMode   `yaml:"mode"`
	Admit    []float64 `yaml:"admit"`
	Duration Duration  `yaml:"duration"`
}

// MTPCongestion is the reaction to SCON.
type MTPCongestion struct {
	T29   Duration  `yaml:"t29"`
	T30   Duration  `yaml:"t30"`
	Steps []float64 `yaml:"steps"`
}

// Availability declares destinations out of service and back.
type Availability struct {
	T7Failures   *int     `yaml:"t7_failures"`
	ResumeAfter  Duration `yaml:"resume_after"`
	Ping         bool     `yaml:"ping"`
	PingInterval Duration `yaml:"ping_interval"`
}

// Constraint limits one destination.
type Constraint struct {
	PointCode       PointCode `yaml:"point_code"`
	MaxCalls        int       `yaml:"max_calls"`
	MaxOutbound     int       `yaml:"max_outbound"`
	BurstRate       int       `yaml:"burst_rate"`
	BurstWindow     Duration  `yaml:"burst_window"`
	SustainedRate   int       `yaml:"sustained_rate"`
	SustainedWindow Duration  `yaml:"sustained_window"`
}

// CodeYellow is call throttling.
type CodeYellow struct {
	Enabled      *bool    `yaml:"enabled"`
	SampleSize   int      `yaml:"sample_size"`
	EntryLatency Duration `yaml:"entry_latency"`
	ExitPercent  int      `yaml:"exit_percent"`
	Duration     Duration `yaml:"duration"`
	DumpDir      string   `yaml:"dump_dir"`
}

// HostAPI is the socket API for host applications.
type HostAPI struct {
	TCP       string `yaml:"tcp"`
	Unix      string `yaml:"unix"`
	Token     string `yaml:"token"`
	TokenFile string `yaml:"token_file"`
	NoAuth    bool   `yaml:"no_auth"`
	QueueSize int    `yaml:"queue_size"`
	MaxHosts  int    `yaml:"max_hosts"`
	// HelloTimeout closes a connection that has not completed its hello
	// within it (default 5s).
	HelloTimeout Duration `yaml:"hello_timeout"`
	// MaxPreHello limits the connections that have not completed their hello
	// (default 64); beyond it the one that has waited longest is closed.
	MaxPreHello int `yaml:"max_pre_hello"`
	// MaxPending is each host's share of the stack's outbound queue (default
	// 256); beyond it the host's outseizes are refused with 0x0C.
	MaxPending int `yaml:"max_pending"`
	// GeneratedTokenFile is where the token generated when neither token nor
	// token_file is set is written (mode 0600; it is never logged). Default:
	// host-token in a new private directory under $XDG_RUNTIME_DIR or the
	// temporary directory; the log names it.
	GeneratedTokenFile string         `yaml:"generated_token_file"`
	Incoming           []IncomingRule `yaml:"incoming"`
}

// IncomingRule picks the hosts offered an incoming call.
type IncomingRule struct {
	Prefix    string    `yaml:"prefix"`
	PointCode PointCode `yaml:"point_code"`
	Route     string    `yaml:"route"`
	App       string    `yaml:"app"`
}

// Log is the logging set-up.
type Log struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
}

// Config is the loaded configuration, ready for the parts.
type Config struct {
	Source  string // the file name, or "(embedded default)"
	Gateway gateway.Config
	// M3UAOptions carry what the M3UA config cannot: the SCTP ports inside
	// UDP, the liveness settings.
	M3UAOptions []m3ua.Option
	// Liveness is the peer liveness in force (already in M3UAOptions).
	Liveness Liveness
	// Transport is the transport actually used (auto resolved), and why.
	Transport    transport.Kind
	TransportWhy string
	Congestion   sprc.Config
	Host         host.Config
	MetricsAddr  string
	CapturePath  string
	DumpDir      string
	LogLevel     string
	LogFormat    string
	// TokenGenerated is set when auth is on and no token was configured: Load
	// made a random one for this run, which the binary writes to
	// GeneratedTokenFile (never to the log).
	TokenGenerated     bool
	GeneratedTokenFile string
	// MTP3 is the own MTP3 node on signalling links (nil without an mtp3
	// section).
	MTP3 *MTP3Plan
	// PointCodes is how point codes are shown and read: as the top-level
	// point_code is written (a number, 3-8-3 or 8-8-8). The stack, congestion
	// control and the host API carry it in their configurations too.
	PointCodes mtp.PointCodeFormat
	// SCTPPorts are the SCTP ports inside UDP (local, peers'), set with the
	// udp transport, and M3UALocal is m3ua.local: a reload compares them,
	// they cannot change live.
	SCTPPorts [2]uint16
	M3UALocal netip.AddrPort
}

// TokenEnv is the environment variable that, when set, gives the host API
// token instead of host_api.token and host_api.token_file.
const TokenEnv = "ISUPGW_TOKEN"

// Load reads a configuration file ("" for the embedded default).
func Load(path string) (*Config, error) {
	if path == "" {
		return Parse("(embedded default)", defaultYAML)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

// Parse reads a configuration from bytes; name is used in errors.
func Parse(name string, b []byte) (*Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	paths := indexPaths(&root)
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var decodeErrs []lineErr
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		var te *yaml.TypeError
		if !errors.As(err, &te) { // a syntax error: nothing else can be trusted
			return nil, paths.explain(name, err)[0].err
		}
		decodeErrs = paths.explain(name, err)
	}
	// Validate what did decode too, so that one check lists every error;
	// a field that failed to decode is not reported again as missing.
	v := &validator{name: name, paths: paths, decodeFailed: len(decodeErrs) > 0}
	cfg := v.build(&f)
	all := decodeErrs
	for _, e := range v.errs {
		if !covered(e.path, decodeErrs) {
			all = append(all, e)
		}
	}
	if len(all) == 0 {
		return cfg, nil
	}
	// In the file's order; errors that name no line last.
	order := func(e lineErr) int {
		if e.line == 0 {
			return math.MaxInt
		}
		return e.line
	}
	slices.SortStableFunc(all, func(a, b lineErr) int { return cmp.Compare(order(a), order(b)) })
	errs := make([]error, len(all))
	for i, e := range all {
		errs[i] = e.err
	}
	return nil, errors.Join(errs...)
}

// lineErr is one error of a file with the line and the field path it names
// (0 and "" when it names none).
type lineErr struct {
	line   int
	path   string
	err    error
	covers []string // further paths it explains (the field a misspelt one meant)
}

// covered reports whether a decoding error already explains an error at path:
// one is a part of the other (circuit_groups[0].cics and circuit_groups[0]).
func covered(path string, decodeErrs []lineErr) bool {
	related := func(a, b string) bool {
		return a == b || strings.HasPrefix(a, b+".") || strings.HasPrefix(a, b+"[")
	}
	for _, d := range decodeErrs {
		for _, dp := range append([]string{d.path}, d.covers...) {
			if dp != "" && path != "" && (related(path, dp) || related(dp, path)) {
				return true
			}
		}
	}
	return false
}

// pathIndex maps YAML field paths to lines and back.
type pathIndex struct {
	line   map[string]int
	byLine map[int]string
	byPos  map[[2]int]string // a value's line and column: its path
}

func indexPaths(root *yaml.Node) pathIndex {
	p := pathIndex{line: map[string]int{}, byLine: map[int]string{}, byPos: map[[2]int]string{}}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, val := n.Content[i], n.Content[i+1]
				child := k.Value
				if path != "" {
					child = path + "." + k.Value
				}
				p.add(child, k.Line, true)
				if val.Line != k.Line {
					p.add(child, val.Line, true)
				}
				p.byPos[[2]int{val.Line, val.Column}] = child
				walk(val, child)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				child := fmt.Sprintf("%s[%d]", path, i)
				p.add(child, c.Line, false)
				p.byPos[[2]int{c.Line, c.Column}] = child
				walk(c, child)
			}
		}
	}
	walk(root, "")
	return p
}

// add records a path's line. A mapping key claims its line (deeper keys, on
// later lines, claim theirs); a list item claims a line only if no key did, so
// an error in a one-line list names its field.
func (p pathIndex) add(path string, line int, key bool) {
	if _, ok := p.line[path]; !ok {
		p.line[path] = line
	}
	if _, taken := p.byLine[line]; key || !taken {
		p.byLine[line] = path
	}
}

var lineRE = regexp.MustCompile(`line (\d+)(?: col (\d+))?: `)

// explain turns a decoding error into "file:line: path: message" errors, in
// the project's words: an unknown field with the known field nearest to it,
// a value of the wrong type with the type the field wants.
func (p pathIndex) explain(name string, err error) []lineErr {
	var msgs []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	var out []lineErr
	for _, m := range msgs {
		m = strings.ReplaceAll(m, "\n", `\n`) // a multi-line value quoted in the message: one error, one line
		loc := lineRE.FindStringSubmatch(m)
		if loc == nil {
			out = append(out, lineErr{err: fmt.Errorf("%s: %s", name, m)})
			continue
		}
		line, _ := strconv.Atoi(loc[1])
		rest, suggested := plainWords(strings.Replace(m, loc[0], "", 1))
		path := p.byLine[line]
		if col, err := strconv.Atoi(loc[2]); err == nil && p.byPos[[2]int{line, col}] != "" {
			path = p.byPos[[2]int{line, col}]
		}
		var covers []string
		if suggested != "" { // the field meant is not missing, only misspelt
			covers = append(covers, parentPath(path)+suggested)
		}
		var e error
		if path != "" {
			e = fmt.Errorf("%s:%d: %s: %s", name, line, path, rest)
		} else {
			e = fmt.Errorf("%s:%d: %s", name, line, rest)
		}
		out = append(out, lineErr{line: line, path: path, err: e, covers: covers})
	}
	return out
}

// parentPath is the path of the section holding path's field, with a
// trailing dot ("" at the top).
func parentPath(path string) string {
	if i := strings.LastIndexAny(path, "."); i >= 0 {
		return path[:i+1]
	}
	return ""
}

// validator builds the parts' configurations and collects errors with paths.
type validator struct {
	name  string
	paths pathIndex
	errs  []lineErr
	// decodeFailed: some fields did not decode, so checks across the whole
	// configuration would report their absence, not the file's errors.
	decodeFailed bool
}

func (v *validator) fail(path, format string, a ...any) {
	line := v.paths.line[path]
	for line == 0 && strings.ContainsAny(path, ".[") { // fall back to the enclosing field
		i := strings.LastIndexAny(path, ".[")
		path = path[:i]
		line = v.paths.line[path]
	}
	var err error
	if line > 0 {
		err = fmt.Errorf("%s:%d: %s: %s", v.name, line, path, fmt.Sprintf(format, a...))
	} else {
		err = fmt.Errorf("%s: %s: %s", v.name, path, fmt.Sprintf(format, a...))
	}
	v.errs = append(v.errs, lineErr{line: line, path: path, err: err})
}

func (v *validator) pointCode(path string, p PointCode, ansi bool, required bool) mtp.PointCode {
	if !p.set {
		if required {
			v.fail(path, "missing (want the point code)")
		}
		return 0
	}
	pc, err := p.resolve(ansi)
	if err != nil {
		v.fail(path, "%v", err)
	}
	return mtp.PointCode(pc)
}

func (v *validator) build(f *File) *Config {
	cfg := &Config{Source: v.name}
	variant := isup.ITU
	if f.Variant.set {
		variant = f.Variant.v
	}
	ansi := variant == isup.ANSI
	own := v.pointCode("point_code", f.PointCode, ansi, true)
	// Point codes are shown as the top-level point_code is written.
	pcf := mtp.PointCodeFormat{Dashed: f.PointCode.dashed(), ANSI: ansi}
	cfg.PointCodes = pcf
	ni := uint8(2) // national
	if f.NetworkIndicator.set {
		ni = f.NetworkIndicator.v
	}

	// Circuit groups.
	st := stack.Config{OPC: own, NI: ni, PointCodes: pcf, ResetOnStart: true, ResetOnResume: f.ResetOnResume, StateFile: f.StateFile,
		Timers: stack.Timers{T1: time.Duration(f.Timers.T1), T2: time.Duration(f.Timers.T2), T3: time.Duration(f.Timers.T3),
			T4: time.Duration(f.Timers.T4), T5: time.Duration(f.Timers.T5), T6: time.Duration(f.Timers.T6), T7: time.Duration(f.Timers.T7),
			T8: time.Duration(f.Timers.T8), T9: time.Duration(f.Timers.T9), T12: time.Duration(f.Timers.T12), T13: time.Duration(f.Timers.T13),
			T14: time.Duration(f.Timers.T14), T15: time.Duration(f.Timers.T15), T16: time.Duration(f.Timers.T16), T17: time.Duration(f.Timers.T17),
			T18: time.Duration(f.Timers.T18), T19: time.Duration(f.Timers.T19), T20: time.Duration(f.Timers.T20), T21: time.Duration(f.Timers.T21),
			T22: time.Duration(f.Timers.T22), T23: time.Duration(f.Timers.T23), T27: time.Duration(f.Timers.T27), T28: time.Duration(f.Timers.T28),
			T33: time.Duration(f.Timers.T33)}}
	if f.ResetOnStart != nil {
		st.ResetOnStart = *f.ResetOnStart
	}
	if len(f.CircuitGroups) == 0 {
		v.fail("circuit_groups", "missing (want at least one circuit group)")
	}
	names := map[string]bool{}
	pcs := map[mtp.PointCode]string{}
	for i, g := range f.CircuitGroups {
		path := fmt.Sprintf("circuit_groups[%d]", i)
		gv := variant
		if g.Variant != nil {
			gv = g.Variant.v
		}
		dpc := v.pointCode(path+".point_code", g.PointCode, gv == isup.ANSI, true)
		if g.Name == "" {
			v.fail(path, "missing name (want a name hosts and routes can use)")
		} else if names[g.Name] {
			v.fail(path+".name", "%q is used by another circuit group", g.Name)
		}
		names[g.Name] = true
		if dpc != 0 && dpc == own {
			v.fail(path+".point_code", "%s is our own point code", pcf.Format(dpc))
		}
		if prev, dup := pcs[dpc]; dup && dpc != 0 {
			v.fail(path+".point_code", "%s already has circuit group %q (one group per adjacent exchange)", pcf.Format(dpc), prev)
		}
		pcs[dpc] = g.Name
		if len(g.CICs) == 0 {
			v.fail(path+".cics", "missing (want CIC ranges like [\"1-31\"])")
		}
		for j, r := range g.CICs {
			if r.Last > gv.MaxCIC() {
				v.fail(fmt.Sprintf("%s.cics[%d]", path, j), "CIC %d exceeds the %s maximum %d", r.Last, gv, gv.MaxCIC())
			}
		}
		st.Groups = append(st.Groups, stack.Group{Name: g.Name, DPC: dpc, Variant: gv, CICs: g.CICs, Direction: g.Direction.v, Glare: g.Glare.v})
	}

	// M3UA.
	m := m3ua.Config{Role: m3ua.RoleIPSP, Transport: f.M3UA.Transport.v, DoubleExchange: f.M3UA.DoubleExchange, RouteMode: mtp.Loadshare}
	if f.M3UA.Role.set {
		m.Role = f.M3UA.Role.v
	}
	if f.M3UA.RouteMode.set {
		m.RouteMode = f.M3UA.RouteMode.v
	}
	if f.M3UA.Listen != nil {
		m.Listen = netipAddrPort(*f.M3UA.Listen)
	}
	if f.M3UA.NetworkAppearance != nil {
		m.NetworkAppearance, m.HasNetworkAppearance = *f.M3UA.NetworkAppearance, true
	}
	if m.Role == m3ua.RoleSG && f.M3UA.Listen == nil {
		v.fail("m3ua.role", "an SG must listen (want m3ua.listen)")
	}
	cfg.MTP3 = v.mtp3Plan(f, own, ni, ansi)
	if len(f.M3UA.Peers) == 0 && cfg.MTP3 == nil {
		v.fail("m3ua.peers", "missing (want at least one peer: an STP, SG or adjacent exchange; or mtp3 linksets)")
	}
	peerNames := map[string]bool{}
	for i, p := range f.M3UA.Peers {
		path := fmt.Sprintf("m3ua.peers[%d]", i)
		if p.Name == "" {
			v.fail(path, "missing name")
		} else if peerNames[p.Name] {
			v.fail(path+".name", "%q is used by another peer", p.Name)
		}
		peerNames[p.Name] = true
		mp := m3ua.Peer{Name: p.Name, RoutingContexts: p.RoutingContexts, TrafficMode: mtp.Loadshare, Default: p.DefaultRoute}
		if p.TrafficMode.set {
			mp.TrafficMode = p.TrafficMode.v
		}
		switch {
		case p.Connect != nil && p.AcceptFrom != nil:
			v.fail(path, "both connect and accept_from (want one: we dial the peer, or it dials us)")
		case p.Connect != nil:
			mp.Dial = netipAddrPort(*p.Connect)
		case p.AcceptFrom != nil:
			mp.From = netipAddr(*p.AcceptFrom)
			if f.M3UA.Listen == nil {
				v.fail(path+".accept_from", "peers that dial us need m3ua.listen")
			}
		default:
			v.fail(path, "neither connect nor accept_from (want connect: ADDR:PORT to dial it, or accept_from: ADDR when it dials us)")
		}
		if p.ASPID != nil {
			mp.ASPID, mp.HasASPID = *p.ASPID, true
		}
		for j, pc := range p.PointCodes {
			mp.DPCs = append(mp.DPCs, v.pointCode(fmt.Sprintf("%s.point_codes[%d]", path, j), pc, ansi, true))
		}
		if f.Redundancy.Mode == "active-standby" {
			if p.TrafficMode.set && p.TrafficMode.v != mtp.Override {
				v.fail(path+".traffic_mode", "an active-standby pair needs override (in a loadshare AS the STP sends the messages of one call to either instance, and ISUP keeps its state per CIC)")
			}
			mp.TrafficMode, mp.Standby = mtp.Override, true
		}
		m.Peers = append(m.Peers, mp)
	}
	switch f.Redundancy.Mode {
	case "", "single":
	case "active-standby":
		if m.Role != m3ua.RoleASP {
			v.fail("redundancy.mode", "active-standby needs m3ua.role asp (the pair are two ASPs of one AS at an STP or SG)")
		}
	default:
		v.fail("redundancy.mode", "%q (want single or active-standby)", f.Redundancy.Mode)
	}
	// Every circuit group must be reachable through some peer.
	routed := map[mtp.PointCode]bool{}
	anyDefault := false
	for _, p := range m.Peers {
		for _, pc := range p.DPCs {
			routed[pc] = true
		}
		anyDefault = anyDefault || p.Default
	}
	for i, g := range st.Groups {
		if g.DPC != 0 && !routed[g.DPC] && !anyDefault && !cfg.MTP3.routes(g.DPC) {
			v.fail(fmt.Sprintf("circuit_groups[%d].point_code", i), "no m3ua peer routes point code %s (add it to a peer's point_codes, mark a peer default_route, or route it through an mtp3 linkset)", pcf.Format(g.DPC))
		}
	}
	v.encapsulate(f, &m, cfg)
	cfg.Gateway = gateway.Config{Stack: st, M3UA: m}
	v.liveness(f, cfg)

	// Congestion control.
	c := f.Congestion
	sc := sprc.Config{ProbeInterval: time.Duration(c.ProbeInterval), AverageOver: c.AverageOver,
		Level1Delay: time.Duration(c.Level1Delay), Level1Average: time.Duration(c.Level1Average), ClearAverage: time.Duration(c.ClearAverage),
		Level1Outseize: c.Level1Outseize.v, ThrottleTarget: time.Duration(c.ThrottleTarget),
		ACC: sprc.ACCConfig{Mode: c.ACC.Mode.v, Duration: time.Duration(c.ACC.Duration)},
		MTP: sprc.MTPCongestionConfig{T29: time.Duration(c.MTP.T29), T30: time.Duration(c.MTP.T30), Steps: c.MTP.Steps},
		Availability: sprc.AvailabilityConfig{T7Failures: sprc.Default.Availability.T7Failures, ResumeAfter: time.Duration(c.Availability.ResumeAfter),
			Ping: c.Availability.Ping, PingInterval: time.Duration(c.Availability.PingInterval)},
		CodeYellow: sprc.CodeYellowConfig{Enabled: true, SampleSize: f.CodeYellow.SampleSize, EntryLatency: time.Duration(f.CodeYellow.EntryLatency),
			ExitPercent: f.CodeYellow.ExitPercent, Duration: time.Duration(f.CodeYellow.Duration)}}
	if c.Availability.T7Failures != nil {
		sc.Availability.T7Failures = *c.Availability.T7Failures
	}
	ad := c.Admission
	sc.Admission = sprc.AdmissionConfig{Enabled: ad.Enabled == nil || *ad.Enabled, Target: time.Duration(ad.Target),
		InitialLimit: ad.InitialLimit, MinLimit: ad.MinLimit, MaxLimit: ad.MaxLimit, Smoothing: ad.Smoothing,
		Window: time.Duration(ad.Window), Baseline: time.Duration(ad.Baseline), FirstProbe: time.Duration(ad.FirstProbe), Hold: time.Duration(ad.Hold), ClearAfter: time.Duration(ad.ClearAfter)}
	if f.CodeYellow.Enabled != nil {
		sc.CodeYellow.Enabled = *f.CodeYellow.Enabled
	}
	if len(c.ACC.Admit) > 0 {
		if len(c.ACC.Admit) != 3 {
			v.fail("congestion.acc.admit", "%d values (want 3: the fractions admitted at ACL 1, 2 and 3)", len(c.ACC.Admit))
		} else {
			copy(sc.ACC.Admit[:], c.ACC.Admit)
		}
	}
	for i, k := range c.Constraints {
		path := fmt.Sprintf("congestion.constraints[%d]", i)
		sc.Constraints = append(sc.Constraints, sprc.Constraint{DPC: v.pointCode(path+".point_code", k.PointCode, ansi, true),
			MaxCalls: k.MaxCalls, MaxOutbound: k.MaxOutbound, BurstRate: k.BurstRate, BurstWindow: time.Duration(k.BurstWindow),
			SustainedRate: k.SustainedRate, SustainedWindow: time.Duration(k.SustainedWindow)})
	}
	if c.ThrottleTarget != 0 && sc.Level1Outseize != sprc.Level1Throttle {
		v.fail("congestion.throttle_target", "set, but level1_outseize is refuse, which does not use it (want level1_outseize: throttle, or no throttle_target)")
	}
	if err := sc.Validate(); err != nil {
		for _, e := range unjoin(err) {
			v.fail("congestion", "%v", e)
		}
	}
	sc.PointCodes = pcf
	cfg.Congestion = sc
	cfg.DumpDir = f.CodeYellow.DumpDir
	if cfg.DumpDir == "" {
		cfg.DumpDir = os.TempDir()
	}

	// Host API.
	h := host.Config{TCP: f.HostAPI.TCP, Unix: f.HostAPI.Unix, Token: f.HostAPI.Token, NoAuth: f.HostAPI.NoAuth,
		QueueSize: f.HostAPI.QueueSize, MaxHosts: f.HostAPI.MaxHosts, HelloTimeout: time.Duration(f.HostAPI.HelloTimeout),
		MaxPreHello: f.HostAPI.MaxPreHello, MaxPending: f.HostAPI.MaxPending}
	for _, g := range cfg.Gateway.Stack.Groups {
		h.Destinations = append(h.Destinations, host.Destination{DPC: g.DPC, ANSI: g.Variant == isup.ANSI})
	}
	if env := os.Getenv(TokenEnv); env != "" {
		// A container passes its secret this way (docker run -e); it wins
		// over the file's token and token_file.
		h.Token = env
	} else if f.HostAPI.TokenFile != "" {
		b, err := os.ReadFile(f.HostAPI.TokenFile)
		if err != nil {
			v.fail("host_api.token_file", "%v", err)
		}
		h.Token = strings.TrimSpace(string(b))
	}
	if h.Token == "" && !h.NoAuth {
		h.Token = randomToken()
		cfg.TokenGenerated = true
		cfg.GeneratedTokenFile = f.HostAPI.GeneratedTokenFile
	}
	for i, r := range f.HostAPI.Incoming {
		path := fmt.Sprintf("host_api.incoming[%d]", i)
		if _, err := isup.ParseDigits(r.Prefix); err != nil {
			v.fail(path+".prefix", "%q: %v", r.Prefix, err)
		}
		if r.Route != "" && !names[r.Route] {
			v.fail(path+".route", "%q is not a circuit group", r.Route)
		}
		h.Rules = append(h.Rules, host.Rule{Prefix: r.Prefix, OPC: v.pointCode(path+".point_code", r.PointCode, ansi, false), Route: r.Route, App: r.App})
	}
	h.PointCodes = pcf
	cfg.Host = h

	cfg.MetricsAddr = f.Metrics
	if cfg.MetricsAddr == "" {
		cfg.MetricsAddr = "127.0.0.1:9700"
	}
	cfg.CapturePath = f.Capture
	cfg.LogLevel, cfg.LogFormat = strings.ToLower(f.Log.Level), strings.ToLower(f.Log.Format)
	if cfg.LogLevel == "" {
		cfg.LogLevel = "info"
	}
	if cfg.LogFormat == "" {
		cfg.LogFormat = "json"
	}
	switch cfg.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		v.fail("log.level", "%q (want debug, info, warn or error)", f.Log.Level)
	}
	if cfg.LogFormat != "json" && cfg.LogFormat != "console" {
		v.fail("log.format", "%q (want json or console)", f.Log.Format)
	}
	if err := st.Validate(); err != nil && len(v.errs) == 0 && !v.decodeFailed {
		for _, e := range unjoin(err) {
			v.fail("circuit_groups", "%v", e)
		}
	}
	return cfg
}

// encapsulate applies SCTP over UDP: the addresses in the file are SCTP
// addresses (port 2905 by convention); the datagrams go to and from UDP port
// udp_port (9899), and the SCTP ports travel inside.
func (v *validator) encapsulate(f *File, m *m3ua.Config, cfg *Config) {
	kind, why := transport.Resolve(m.Transport)
	cfg.Transport, cfg.TransportWhy = kind, why
	m.Transport = kind // resolved once: the endpoint and its /status agree on it
	var local netip.AddrPort
	if f.M3UA.Local != nil {
		local = netipAddrPort(*f.M3UA.Local)
	}
	cfg.M3UALocal = local
	if kind != transport.KindUDP {
		if local.IsValid() {
			cfg.M3UAOptions = append(cfg.M3UAOptions, m3ua.WithTransportOptions(transport.WithLocalAddr(local)))
		}
		return
	}
	udp := f.M3UA.UDPPort
	if udp == 0 {
		udp = 9899
	}
	var localSCTP, peerSCTP uint16 = 2905, 0
	if m.Listen.IsValid() {
		localSCTP = m.Listen.Port()
		m.Listen = netip.AddrPortFrom(m.Listen.Addr(), udp)
	}
	if local.IsValid() {
		// One SCTP port for the listener and the associations we dial.
		if p := local.Port(); p != 0 {
			if f.M3UA.Listen != nil && p != localSCTP {
				v.fail("m3ua.local", "SCTP port %d differs from listen's %d: over UDP both use one SCTP port", p, localSCTP)
			}
			localSCTP = p
		}
		cfg.M3UAOptions = append(cfg.M3UAOptions, m3ua.WithTransportOptions(transport.WithLocalAddr(netip.AddrPortFrom(local.Addr(), 0))))
	}
	for i := range m.Peers {
		p := &m.Peers[i]
		if !p.Dial.IsValid() {
			continue
		}
		if peerSCTP != 0 && p.Dial.Port() != peerSCTP {
			v.fail(fmt.Sprintf("m3ua.peers[%d].connect", i), "SCTP port %d differs from another peer's %d: over UDP every peer must use the same SCTP port", p.Dial.Port(), peerSCTP)
		}
		peerSCTP = p.Dial.Port()
		pu := f.M3UA.Peers[i].UDPPort
		if pu == 0 {
			pu = udp
		}
		p.Dial = netip.AddrPortFrom(p.Dial.Addr(), pu)
	}
	if peerSCTP == 0 {
		peerSCTP = 2905
	}
	cfg.SCTPPorts = [2]uint16{localSCTP, peerSCTP}
	cfg.M3UAOptions = append(cfg.M3UAOptions, m3ua.WithTransportOptions(transport.WithSCTPPorts(localSCTP, peerSCTP)))
}

// liveness turns the heartbeat and SCTP settings into endpoint options.
func (v *validator) liveness(f *File, cfg *Config) {
	hb := f.M3UA.Heartbeat
	interval, timeout := m3ua.DefaultBeatInterval, m3ua.DefaultBeatTimeout
	if hb.Interval != nil {
		interval = time.Duration(*hb.Interval)
	}
	if hb.Timeout != nil {
		timeout = time.Duration(*hb.Timeout)
	}
	if interval > 0 && timeout < interval {
		v.fail("m3ua.heartbeat.timeout", "%v is shorter than the interval %v (want at least one interval)", timeout, interval)
	}
	retrans, rtoMax := defaultMaxRetrans, defaultRTOMax
	if f.M3UA.SCTP.MaxRetransmissions != nil {
		retrans = *f.M3UA.SCTP.MaxRetransmissions
	}
	if f.M3UA.SCTP.RTOMax != nil {
		rtoMax = time.Duration(*f.M3UA.SCTP.RTOMax)
	}
	if retrans < 0 || retrans > 0xffff {
		v.fail("m3ua.sctp.max_retransmissions", "%d (want 0 to 65535; 0 keeps the SCTP default)", retrans)
	}
	if rtoMax < 0 || (rtoMax > 0 && rtoMax < 10*time.Millisecond) {
		v.fail("m3ua.sctp.rto_max", "%v (want 10ms or more; 0 keeps the SCTP default)", rtoMax)
	}
	cfg.Liveness = Liveness{BeatInterval: interval, BeatTimeout: timeout, MaxRetrans: retrans, RTOMax: rtoMax}
	cfg.M3UAOptions = append(cfg.M3UAOptions, m3ua.WithHeartbeat(interval, timeout),
		m3ua.WithTransportOptions(transport.WithPathFailure(retrans, rtoMax)))
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
