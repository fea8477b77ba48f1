// Package app is the running gateway process behind `isupgw run`: it loads the
// configuration, builds the parts, serves metrics and status, and handles the
// signals (SIGHUP reloads, SIGTERM and SIGINT stop gracefully).
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"os"
	"reflect"
	rtmetrics "runtime/metrics"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/isupgw/isupgw/gateway"
	"github.com/isupgw/isupgw/host"
	"github.com/isupgw/isupgw/internal/config"
	"github.com/isupgw/isupgw/internal/metrics"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/capture"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/sprc"
)

// ErrCodeRed is returned by Run after Code Red; the binary exits with
// gateway.ExitCodeRed so that the service manager restarts it.
var ErrCodeRed = errors.New("code red: restart required")

// Options are the command-line overrides and the process's plumbing.
type Options struct {
	ConfigPath string // "" for the embedded default
	LogFormat  string // overrides the file: json or console
	LogLevel   string
	PCAP       string
	LogOut     io.Writer        // default os.Stderr
	Signals    <-chan os.Signal // SIGHUP, SIGTERM, SIGINT
	// DrainTimeout bounds how long SIGTERM waits for calls to end before it
	// releases the rest (default 30 s).
	DrainTimeout time.Duration
	// Ready, if set, receives the running gateway once it is up (tests).
	Ready func(*Running)
}

// Running is a gateway process that is up.
type Running struct {
	Gateway     *gateway.Gateway
	Host        *host.Server
	MetricsAddr net.Addr
	Config      *config.Config
	Log         zerolog.Logger
	mtp3        *mtp3Parts // nil without an mtp3 section
	watch       *assocWatch
}

// listenText is the M3UA listen address for the log: a gateway that only
// dials its peers listens nowhere ("none", not netip's "invalid AddrPort").
func listenText(a netip.AddrPort) string {
	if !a.IsValid() {
		return "none"
	}
	return a.String()
}

// Run runs the gateway until ctx ends or a stop signal arrives.
func Run(ctx context.Context, o Options) error {
	cfg, err := config.Load(o.ConfigPath)
	if err != nil {
		return err
	}
	if o.LogFormat != "" {
		cfg.LogFormat = o.LogFormat
	}
	if o.LogLevel != "" {
		cfg.LogLevel = o.LogLevel
	}
	if o.PCAP != "" {
		cfg.CapturePath = o.PCAP
	}
	if o.LogOut == nil {
		o.LogOut = os.Stderr
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = 30 * time.Second
	}
	log, err := newLogger(o.LogOut, cfg.LogFormat, cfg.LogLevel)
	if err != nil {
		return err
	}
	if cfg.TokenGenerated {
		path, remove, err := writeGeneratedToken(cfg.GeneratedTokenFile, cfg.Host.Token)
		if err != nil {
			return fmt.Errorf("host_api: no token configured, and the generated one cannot be written (set host_api.token or token_file): %w", err)
		}
		defer remove()
		log.Warn().Str("token_file", path).Msg("no host_api token configured: generated one for this run, readable in token_file (mode 0600); hosts must send it in hello. Set host_api.token or token_file to choose it")
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	codeRed := make(chan string, 1)

	var capW *capture.Writer
	if cfg.CapturePath != "" {
		f, err := os.Create(cfg.CapturePath)
		if err != nil {
			return fmt.Errorf("capture: %w", err)
		}
		defer f.Close()
		if capW, err = capture.NewWriter(f); err != nil {
			return err
		}
	}

	var gw *gateway.Gateway
	hostLog := slog.New(zerolog.NewSlogHandler(log.With().Str("part", "host").Logger()))
	srv, err := host.New(cfg.Host, host.WithLogger(hostLog), host.OnOverload(func(level int) {
		if gw != nil && gw.Control != nil {
			gw.Control.HostOverload(level)
		}
		log.Info().Int("level", level).Msg("hosts' declared overload changed")
	}))
	if err != nil {
		return err
	}
	// Bad input floods must not flood the log: M3UA complaints are sampled.
	watch := newAssocWatch() // control.go: associations that do not come up
	m3Base, err := m3uaLogger(o.LogOut, cfg.LogFormat, cfg.LogLevel, watch.dialFailed)
	if err != nil {
		return err
	}
	m3Log := m3Base.Sample(&zerolog.BurstSampler{Burst: 20, Period: time.Second, NextSampler: &zerolog.BasicSampler{N: 1000}})
	m3Opts := append([]m3ua.Option{m3ua.WithLogger(m3Log)}, cfg.M3UAOptions...)
	if capW != nil {
		m3Opts = append(m3Opts, m3ua.WithCapture(capW))
	}
	pcf := cfg.PointCodes
	sink := func(e stack.Event) {
		if a, ok := e.(stack.Alarm); ok {
			logAlarm(log, a, pcf)
		}
		srv.Sink(e)
	}
	var m3 *mtp3Parts
	gwOpts := []gateway.Option{}
	if cfg.MTP3 != nil {
		if m3, err = buildMTP3(cfg.MTP3, capW, func(name string, adj mtp.PointCode, up bool) {
			a := linksetAlarm(name, adj, up, pcf)
			ev := log.Warn()
			if up {
				ev = log.Info()
			}
			ev.Str("part", "mtp3").Str("linkset", name).Str("adjacent", pcf.Format(adj)).Msg(a.Text)
			srv.RaiseAlarm(a)
		}); err != nil {
			return err
		}
		gwOpts = append(gwOpts, gateway.WithMTP(m3.node, m3.linkStatus))
	}
	gw, err = gateway.New(cfg.Gateway, sink, append(gwOpts,
		gateway.WithM3UAOptions(m3Opts...),
		gateway.WithCongestionControl(cfg.Congestion, func(a sprc.Alarm) {
			ev := log.Warn()
			if a.Cleared {
				ev = log.Info()
			}
			ev.Str("alarm", fmt.Sprintf("0x%02X", a.Number)).Bool("cleared", a.Cleared).Interface("data", withPC(a.Data, pcf)).Msg(a.Text)
			srv.RaiseAlarm(host.Alarm{Number: a.Number, Severity: a.Severity, Cleared: a.Cleared, Text: a.Text, Data: a.Data})
		}, func(reason string) {
			select {
			case codeRed <- reason:
			default:
			}
		}),
		gateway.OnMTPEvent(func(ev mtp.Event) { logMTPEvent(log, ev, pcf) }),
		gateway.OnIAMRefused(newIAMRefusalLog(log, pcf, nil).refused),
	)...)
	if err != nil {
		return err
	}
	srv.Attach(gw.Stack)
	if err := gw.Start(ctx); err != nil {
		return err
	}
	if m3 != nil {
		if err := m3.start(); err != nil {
			cancel()
			_ = gw.Wait()
			return err
		}
		defer m3.close()
	}
	if err := srv.Start(ctx); err != nil {
		cancel()
		_ = gw.Wait()
		return err
	}

	handler, err := metrics.Handler(metrics.Join(metrics.NewCollector(metrics.Sources{
		PointCodes: pcf, Stack: gw.Stack.Stats, M3UA: gw.Endpoint.Stats(), Peers: gw.PeerStates, Control: gw.Control.Snapshot, Host: srv.Metrics,
		Links:      m3.metrics,
		Redundancy: func() (string, uint64) { r := gw.Redundancy(); return r.Role, r.Changes },
	}), metrics.NewOpsCollector(opsCollector(gw, srv, pcf))), func() any { return statusOf(gw, srv, pcf) })
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		cancel()
		_ = gw.Wait()
		return fmt.Errorf("metrics: %w", err)
	}
	hs := &http.Server{Handler: withProfiles(handler, ln.Addr()), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	run := &Running{Gateway: gw, Host: srv, MetricsAddr: ln.Addr(), Config: cfg, Log: log, mtp3: m3}
	run.watch = watch
	watch.setPeers(cfg.Gateway.M3UA.Peers)
	go run.watchAssociations(ctx, watch)
	log.Info().Str("config", cfg.Source).Str("point_code", pcf.Format(cfg.Gateway.Stack.OPC)).Str("point_code_format", pcf.String()).
		Str("transport", cfg.Transport.String()).Str("transport_why", cfg.TransportWhy).
		Str("m3ua", listenText(cfg.Gateway.M3UA.Listen)).Str("host_api", fmt.Sprint(srv.TCPAddr())).Str("metrics", ln.Addr().String()).
		Uint64("gogc", gcPercent()).Msg("isupgw running")
	if o.Ready != nil {
		o.Ready(run)
	}

	stopErr := run.loop(ctx, o, codeRed)
	cancel()
	shutdownCtx, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	_ = hs.Shutdown(shutdownCtx)
	gwErr := gw.Wait()
	srv.Wait()
	log.Info().Msg("isupgw stopped")
	if stopErr != nil {
		return stopErr
	}
	if gwErr != nil && !errors.Is(gwErr, context.Canceled) {
		return gwErr
	}
	return nil
}

// withProfiles adds Go's profiles (net/http/pprof under /debug/pprof/) to the
// metrics server when it listens on loopback only: a CPU profile of a running
// gateway is then one `go tool pprof http://127.0.0.1:9700/debug/pprof/profile`
// away, and nothing beyond the machine can ask for one.
func withProfiles(h http.Handler, addr net.Addr) http.Handler {
	if ta, ok := addr.(*net.TCPAddr); !ok || !ta.IP.IsLoopback() {
		return h
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/", h)
	return mux
}

// loop waits for signals; it returns when the gateway should stop.
func (r *Running) loop(ctx context.Context, o Options, codeRed <-chan string) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case reason := <-codeRed:
			folder, err := gateway.WriteDump(r.Config.DumpDir, time.Now())
			r.Log.Error().Str("reason", reason).Str("dump", folder).AnErr("dump_error", err).Msg("Code Red: diagnostic dump written, exiting for a restart")
			return ErrCodeRed
		case sig := <-o.Signals:
			switch sig {
			case syscall.SIGHUP:
				r.reload(o.ConfigPath)
			case syscall.SIGTERM, os.Interrupt:
				r.drain(ctx, o.DrainTimeout, o.Signals)
				return nil
			}
		}
	}
}

// reload applies what can change without dropping calls (congestion
// thresholds, constraints, ACC mode, ISUP timers) and reports the rest.
func (r *Running) reload(path string) {
	next, err := config.Load(path)
	if err != nil {
		r.Log.Error().Err(err).Msg("reload failed: configuration kept as it was")
		return
	}
	var applied, refused []string
	if r.Gateway.Control != nil {
		if err := r.Gateway.Control.Reconfigure(next.Congestion); err != nil {
			r.Log.Error().Err(err).Msg("reload: congestion settings refused")
		} else {
			applied = append(applied, "congestion thresholds, constraints, ACC, Code Yellow")
		}
	}
	r.Gateway.Stack.Submit(stack.SetTimers{Timers: next.Gateway.Stack.Timers})
	applied = append(applied, "ISUP timers")
	old := r.Config
	m3uaApplied, m3uaRefused := r.reloadM3UA(old, next)
	applied = append(applied, m3uaApplied...)
	if m3uaRefused != "" {
		refused = append(refused, m3uaRefused)
	}
	for _, c := range []struct {
		name string
		a, b any
	}{
		{"point_code / network_indicator / circuit_groups", stackShape(old.Gateway.Stack), stackShape(next.Gateway.Stack)},
		{"mtp3", old.MTP3, next.MTP3},
		{"host_api", hostShape(old.Host), hostShape(next.Host)},
		{"metrics", old.MetricsAddr, next.MetricsAddr},
		{"capture", old.CapturePath, next.CapturePath},
		{"log", old.LogFormat + old.LogLevel, next.LogFormat + next.LogLevel},
	} {
		if !reflect.DeepEqual(c.a, c.b) {
			refused = append(refused, c.name)
		}
	}
	ev := r.Log.Info().Strs("reloaded", applied)
	if len(refused) > 0 {
		ev = r.Log.Warn().Strs("reloaded", applied).Strs("not_reloaded", refused)
	}
	ev.Msg("configuration reloaded (sections under not_reloaded need a restart)")
	cfg := *r.Config
	cfg.Congestion, cfg.Gateway.Stack.Timers = next.Congestion, next.Gateway.Stack.Timers
	if len(m3uaApplied) > 0 {
		cfg.Gateway.M3UA = next.Gateway.M3UA
	}
	r.Config = &cfg
}

// m3uaShape is what of the M3UA section must not change on a reload: all
// but the addresses the peers we dial are dialled at (a connect address, or
// its udp_port over SCTP over UDP).
func m3uaShape(c *config.Config) any {
	m := c.Gateway.M3UA
	m.Peers = append([]m3ua.Peer(nil), m.Peers...)
	for i := range m.Peers {
		if m.Peers[i].Dial.IsValid() {
			m.Peers[i].Dial = netip.AddrPortFrom(netip.IPv6Unspecified(), 0) // dialled, somewhere
		}
	}
	return struct {
		M         m3ua.Config
		Transport any
		Liveness  config.Liveness
		Ports     [2]uint16
		Local     netip.AddrPort
	}{m, c.Transport, c.Liveness, c.SCTPPorts, c.M3UALocal}
}

// reloadM3UA applies changed peer addresses: each moved peer's association
// is ended and dialled at its new address (m3ua.Endpoint.Redial), the other
// associations are not touched. Any other change to the section refuses the
// whole section (the old one stays in force, the refusal is logged): it
// needs a restart.
func (r *Running) reloadM3UA(old, next *config.Config) (applied []string, refused string) {
	if !reflect.DeepEqual(m3uaShape(old), m3uaShape(next)) {
		r.Log.Error().Str("part", "m3ua").Msg("reload: the m3ua section changed beyond the peers' connect addresses (peers added, removed or renamed, point codes, ASP ids, routing contexts, listen, transport, ports, liveness): m3ua kept as it was; restart to apply")
		return nil, "m3ua (only the peers' connect addresses and udp_port change live)"
	}
	for i, p := range next.Gateway.M3UA.Peers {
		was := old.Gateway.M3UA.Peers[i].Dial
		if p.Dial == was {
			continue
		}
		if err := r.Gateway.Endpoint.Redial(p.Name, p.Dial); err != nil {
			r.Log.Error().Err(err).Str("part", "m3ua").Str("association", p.Name).Msg("reload: the peer's new address was not applied")
			continue
		}
		r.Log.Info().Str("part", "m3ua").Str("association", p.Name).Str("from", was.String()).Str("to", p.Dial.String()).
			Msg("reload: peer address changed: its association restarts at the new address")
		applied = append(applied, "m3ua peer "+p.Name+" address")
		if r.watch != nil {
			r.watch.moved(p)
		}
	}
	return applied, ""
}

func stackShape(s stack.Config) stack.Config {
	s.Timers = stack.Timers{}
	return s
}

func hostShape(h host.Config) host.Config {
	h.Token = "" // a generated token differs every load
	return h
}

// drain stops taking new calls, waits (bounded) for the calls to end, releases
// the rest and waits for their RLCs, so no circuit is left busy at the far end.
// A second SIGTERM or SIGINT while it waits stops at once, as users expect of
// a daemon: the calls are released (the RELs are handed to M3UA before the
// associations shut down) without waiting for their RLCs.
func (r *Running) drain(ctx context.Context, timeout time.Duration, sigs <-chan os.Signal) {
	st := r.Gateway.Stack
	r.Log.Info().Dur("timeout", timeout).Msg("stopping: no new calls; waiting for calls to end (stop again to release them now)")
	st.Submit(stack.Drain{})
	now := false // a second stop signal came
	quiet := func(d time.Duration, ok func(stack.Snapshot) bool) bool {
		deadline := time.NewTimer(d)
		defer deadline.Stop()
		poll := time.NewTicker(50 * time.Millisecond) // nothing signals "calls ended": poll, bounded
		defer poll.Stop()
		for {
			c, cancel := context.WithTimeout(ctx, time.Second)
			snap, err := st.Inspect(c)
			cancel()
			if err == nil && ok(snap) {
				return true
			}
			select {
			case <-poll.C:
			case <-deadline.C:
				return false
			case <-ctx.Done():
				return false
			case sig := <-sigs:
				if sig == syscall.SIGTERM || sig == os.Interrupt {
					now = true
					return false
				}
			}
		}
	}
	if !quiet(timeout, func(s stack.Snapshot) bool { return s.Calls == 0 }) {
		snap, _ := st.Inspect(ctx)
		if now {
			r.Log.Warn().Int("calls", snap.Calls).Msg("second stop signal: releasing the remaining calls and stopping now")
		} else {
			r.Log.Warn().Int("calls", snap.Calls).Msg("drain timeout: releasing the remaining calls")
		}
		st.Submit(stack.ReleaseAll{})
	}
	if now {
		// The loop serves requests in order: once this answers, the RELs
		// have been sent.
		c, cancel := context.WithTimeout(ctx, time.Second)
		_, _ = st.Inspect(c)
		cancel()
		return
	}
	if !quiet(5*time.Second, func(s stack.Snapshot) bool { return s.CircuitsByState["releasing"] == 0 && s.Calls == 0 }) && !now {
		r.Log.Warn().Msg("some RLCs did not come back before shutdown")
	}
}

func logAlarm(log zerolog.Logger, a stack.Alarm, pcf mtp.PointCodeFormat) {
	ev := log.Warn()
	if a.Cleared {
		ev = log.Info()
	}
	ev.Str("part", "isup").Str("alarm", fmt.Sprintf("0x%02X", host.AlarmNumber(a))).Str("pc", pcf.Format(a.PC)).Uint16("cic", a.CIC).Uint8("kind", uint8(a.Kind)).Bool("cleared", a.Cleared).Msg(a.Text)
}

// logTimeFormat gives every log line a millisecond timestamp (zerolog's
// default is whole seconds, too coarse to order signalling events).
const logTimeFormat = "2006-01-02T15:04:05.000Z07:00"

func init() { zerolog.TimeFieldFormat = logTimeFormat }

// consoleWriter is the console format for people: colour only on a terminal,
// so that a log file or journal holds no escape codes.
func consoleWriter(out io.Writer) zerolog.ConsoleWriter {
	return zerolog.ConsoleWriter{Out: out, TimeFormat: "15:04:05.000", NoColor: !isTerminal(out)}
}

// isTerminal reports whether out is a character device (a terminal).
func isTerminal(out io.Writer) bool {
	f, ok := out.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// newLogger builds the zerolog logger: JSON, or console for people.
func newLogger(out io.Writer, format, level string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil {
		return zerolog.Logger{}, fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	w := out
	switch format {
	case "console":
		w = consoleWriter(out)
	case "json", "":
	default:
		return zerolog.Logger{}, fmt.Errorf("log format %q: want json or console", format)
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

// gcPercent is the garbage collector's target in force: GOGC, or without it
// what the isupgw command sets (cmd/isupgw/gc.go, docs/deployment.md).
func gcPercent() uint64 {
	s := []rtmetrics.Sample{{Name: "/gc/gogc:percent"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
