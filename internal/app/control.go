package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/isupgw/isupgw/gateway"
	"github.com/isupgw/isupgw/host"
	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/internal/metrics"
	"github.com/isupgw/isupgw/internal/ratelog"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/m3ua"
)

// Status is /status: the gateway's state and the active alarms.
type Status struct {
	gateway.Status
	Alarms []AlarmStatus `json:"alarms"`
}

// AlarmStatus is one active alarm.
type AlarmStatus struct {
	Number   string         `json:"number"` // hex, as docs/host-api.md writes it
	Severity uint8          `json:"severity"`
	Text     string         `json:"text"`
	Data     map[string]any `json:"data,omitempty"`
}

// statusOf assembles /status.
func statusOf(gw *gateway.Gateway, srv *host.Server, pcf mtp.PointCodeFormat) Status {
	st := Status{Status: gw.Status(), Alarms: []AlarmStatus{}}
	for _, a := range srv.ActiveAlarms() {
		st.Alarms = append(st.Alarms, AlarmStatus{Number: fmt.Sprintf("0x%02X", a.Number), Severity: a.Severity, Text: a.Text, Data: withPC(a.Data, pcf)})
	}
	sort.Slice(st.Alarms, func(i, j int) bool {
		a, b := st.Alarms[i], st.Alarms[j]
		return a.Number < b.Number || a.Number == b.Number && a.Text < b.Text
	})
	return st
}

// DownAssociations names the configured M3UA associations that are not
// active and the MTP3 linksets that are unavailable: `isupgw status` exits
// non-zero when there is one, so it serves as a health check.
func DownAssociations(st Status) []string {
	var out []string
	for _, a := range st.Associations {
		if a.State != "active" {
			out = append(out, a.Name+" ("+a.State+")")
		}
	}
	seen := map[string]bool{}
	for _, l := range st.Links {
		if !l.Available && !seen[l.Linkset] {
			seen[l.Linkset] = true
			out = append(out, "linkset "+l.Linkset+" (unavailable)")
		}
	}
	return out
}

// dataPC is an alarm's point code ("dpc" in its data: hosts get the number).
func dataPC(data map[string]any) (mtp.PointCode, bool) {
	switch v := data["dpc"].(type) {
	case uint32:
		return mtp.PointCode(v), true
	case mtp.PointCode:
		return v, true
	case int:
		return mtp.PointCode(v), v >= 0
	}
	return 0, false
}

// withPC adds "pc", the alarm's point code as the configuration writes it,
// beside the numeric "dpc" (for /status and the log; data is not changed).
func withPC(data map[string]any, pcf mtp.PointCodeFormat) map[string]any {
	pc, ok := dataPC(data)
	if !ok {
		return data
	}
	out := make(map[string]any, len(data)+1)
	for k, v := range data {
		out[k] = v
	}
	out["pc"] = pcf.Format(pc)
	return out
}

// logMTPEvent logs an MTP status indication, with its point code as the
// configuration writes it.
func logMTPEvent(log zerolog.Logger, ev mtp.Event, pcf mtp.PointCodeFormat) {
	var pc mtp.PointCode
	switch e := ev.(type) {
	case mtp.Pause:
		pc = e.PC
	case mtp.Resume:
		pc = e.PC
	case mtp.Restricted:
		pc = e.PC
	case mtp.Congestion:
		pc = e.PC
	case mtp.UserPartUnavailable:
		pc = e.PC
	}
	l := log.Info().Str("part", "mtp")
	if pc != 0 {
		l = l.Str("pc", pcf.Format(pc))
	}
	l.Msg(mtp.EventText(ev, pcf))
}

// iamRefusalLog logs the incoming IAMs refused (issue 17): at most one line
// a second per reason, at warn, with the count of those left out since the
// reason's previous line, so that an overload shedding thousands a second
// shows in the log without flooding it.
type iamRefusalLog struct {
	log   zerolog.Logger
	pcf   mtp.PointCodeFormat
	limit *ratelog.Limiter
}

func newIAMRefusalLog(log zerolog.Logger, pcf mtp.PointCodeFormat, now func() time.Time) *iamRefusalLog {
	return &iamRefusalLog{log: log, pcf: pcf, limit: ratelog.New(time.Second, now)}
}

// refused is gateway.OnIAMRefused's hook: cheap when limited (a lock and a
// map look-up), safe from the stack's loop and the inbound pump at once.
func (l *iamRefusalLog) refused(r stack.RefusedIAM) {
	n, ok := l.limit.Allow(r.Reason)
	if !ok {
		return
	}
	ev := l.log.Warn().Str("part", "isup").Str("opc", l.pcf.Format(r.OPC)).Uint16("cic", r.CIC)
	if r.Cause != 0 {
		ev = ev.Uint8("cause", r.Cause)
	}
	ev.Str("reason", r.Reason).Uint64("suppressed", n).Msg("incoming IAM refused")
}

// opsCollector gives the operator metrics their sources.
func opsCollector(gw *gateway.Gateway, srv *host.Server, pcf mtp.PointCodeFormat) metrics.OpsSources {
	return metrics.OpsSources{
		PointCodes: pcf,
		Stack:      gw.Stack.Stats,
		Alarms: func() []metrics.ActiveAlarm {
			var out []metrics.ActiveAlarm
			for _, a := range srv.ActiveAlarms() {
				dpc := ""
				if pc, ok := dataPC(a.Data); ok {
					dpc = pcf.Format(pc)
				} else if v, ok := a.Data["dpc"]; ok {
					dpc = fmt.Sprint(v)
				}
				out = append(out, metrics.ActiveAlarm{Number: a.Number, DPC: dpc})
			}
			return out
		},
		Destinations: func() []metrics.Destination {
			st := gw.Status()
			var out []metrics.Destination
			for _, d := range st.Destinations {
				out = append(out, metrics.Destination{Group: d.Name, DPC: d.PointCode, Available: d.Available, Congestion: d.MTPLevel})
			}
			return out
		},
	}
}

// Association watching: a configured association that is not active after
// associationGrace is logged at warn (at most every associationWarnEvery) with
// its address and the reason, and raises alarm 0x1B to hosts, cleared when it
// comes up. Variables so that tests can shorten them.
var (
	associationGrace     = 10 * time.Second
	associationWarnEvery = time.Minute
	associationPoll      = time.Second
)

type assocWatch struct {
	grace, warnEvery, poll time.Duration
	mu                     sync.Mutex
	peers                  []m3ua.Peer       // the configured ones (a reload may move one)
	lastErr                map[string]string // peer -> last dial error, from the M3UA log
	since                  map[string]time.Time
	warned                 map[string]time.Time
	alarmed                map[string]bool
	movedAlarm             map[string]bool // alarmed, and the address changed since
}

func newAssocWatch() *assocWatch {
	return &assocWatch{grace: associationGrace, warnEvery: associationWarnEvery, poll: associationPoll, lastErr: map[string]string{}, since: map[string]time.Time{}, warned: map[string]time.Time{}, alarmed: map[string]bool{}, movedAlarm: map[string]bool{}}
}

// setPeers gives the watcher the configured associations.
func (w *assocWatch) setPeers(peers []m3ua.Peer) {
	w.mu.Lock()
	w.peers = append([]m3ua.Peer(nil), peers...)
	w.mu.Unlock()
}

// moved notes a peer's new address (a reload): the old address's failure
// is forgotten, and if the alarm is up it is raised again with the new
// address once the association is still not up (the down time goes on).
func (w *assocWatch) moved(p m3ua.Peer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	peers := append([]m3ua.Peer(nil), w.peers...) // check may be reading the old slice
	for i := range peers {
		if peers[i].Name == p.Name {
			peers[i] = p
		}
	}
	w.peers = peers
	delete(w.lastErr, p.Name)
	delete(w.warned, p.Name)
	if w.alarmed[p.Name] {
		w.movedAlarm[p.Name] = true // raise it again, with the new address
	}
}

func (w *assocWatch) dialFailed(peer, reason string) {
	w.mu.Lock()
	w.lastErr[peer] = reason
	w.mu.Unlock()
}

func peerAddress(p m3ua.Peer) string {
	if p.Dial.IsValid() {
		return p.Dial.String()
	}
	return "from " + p.From.String()
}

// check looks at every configured association once.
func (w *assocWatch) check(now time.Time, r *Running) {
	w.mu.Lock()
	peers := w.peers
	w.mu.Unlock()
	for _, p := range peers {
		state := "down"
		if a := r.Gateway.Endpoint.Peer(p.Name); a != nil {
			state = a.State().String()
		}
		w.mu.Lock()
		reason := w.lastErr[p.Name]
		if state == "active" {
			wasAlarmed := w.alarmed[p.Name]
			delete(w.since, p.Name)
			delete(w.alarmed, p.Name)
			delete(w.warned, p.Name)
			delete(w.lastErr, p.Name)
			delete(w.movedAlarm, p.Name)
			w.mu.Unlock()
			if wasAlarmed {
				r.Log.Info().Str("part", "m3ua").Str("association", p.Name).Str("address", peerAddress(p)).Msg("association up: alarm 0x1B cleared")
				r.Host.RaiseAlarm(host.Alarm{Number: wire.AlarmAssociationDown, Severity: wire.SeverityMajor, Cleared: true,
					Text: "association " + p.Name + " up", Data: map[string]any{"association": p.Name, "address": peerAddress(p)}})
			}
			continue
		}
		if _, ok := w.since[p.Name]; !ok {
			w.since[p.Name] = now
		}
		down := now.Sub(w.since[p.Name])
		if down < w.grace {
			w.mu.Unlock()
			continue
		}
		if reason == "" {
			reason = "no association yet (ASP state " + state + ")"
			if !p.Dial.IsValid() {
				reason = "the peer has not connected (ASP state " + state + ")"
			}
		}
		raise := !w.alarmed[p.Name] || w.movedAlarm[p.Name]
		w.alarmed[p.Name] = true
		delete(w.movedAlarm, p.Name)
		warn := now.Sub(w.warned[p.Name]) >= w.warnEvery
		if warn {
			w.warned[p.Name] = now
		}
		w.mu.Unlock()
		if warn {
			r.Log.Warn().Str("part", "m3ua").Str("association", p.Name).Str("address", peerAddress(p)).Str("state", state).
				Str("reason", reason).Dur("down_for", down.Round(time.Second)).Msg("association not up")
		}
		if raise {
			r.Host.RaiseAlarm(host.Alarm{Number: wire.AlarmAssociationDown, Severity: wire.SeverityMajor,
				Text: fmt.Sprintf("association %s (%s) not up: %s", p.Name, peerAddress(p), reason),
				Data: map[string]any{"association": p.Name, "address": peerAddress(p), "reason": reason}})
		}
	}
}

// watchAssociations runs check until ctx ends. The peers are the watcher's
// (setPeers, moved): SIGHUP replaces r.Config on the signal loop, which this
// goroutine must not read.
func (r *Running) watchAssociations(ctx context.Context, w *assocWatch) {
	t := time.NewTicker(w.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			w.check(now, r)
		}
	}
}

// m3uaLogWriter sits under the M3UA part's logger: it forwards the lines at or
// above the configured level, and reads the dial failures the endpoint logs at
// debug level for the association watcher's reason.
type m3uaLogWriter struct {
	out    io.Writer
	min    zerolog.Level
	onDial func(peer, reason string)
}

func (w *m3uaLogWriter) Write(p []byte) (int, error) { return w.WriteLevel(zerolog.NoLevel, p) }

func (w *m3uaLogWriter) WriteLevel(l zerolog.Level, p []byte) (int, error) {
	if l == zerolog.DebugLevel && bytes.Contains(p, []byte("dial failed")) {
		var line struct {
			Peer  string `json:"peer"`
			Error string `json:"error"`
		}
		if json.Unmarshal(p, &line) == nil && line.Peer != "" {
			w.onDial(line.Peer, line.Error)
		}
	}
	if l != zerolog.NoLevel && l < w.min {
		return len(p), nil
	}
	return w.out.Write(p)
}

// m3uaLogger is the M3UA part's logger: as newLogger's, but it sees debug
// lines so that the watcher learns why a dial failed.
func m3uaLogger(out io.Writer, format, level string, onDial func(peer, reason string)) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil {
		return zerolog.Logger{}, err
	}
	w := out
	if format == "console" {
		w = consoleWriter(out)
	}
	return zerolog.New(&m3uaLogWriter{out: w, min: lvl, onDial: onDial}).Level(zerolog.DebugLevel).With().Timestamp().Str("part", "m3ua").Logger(), nil
}

// FetchFullStatus is FetchStatus with the active alarms.
func FetchFullStatus(addr string) (Status, []byte, error) {
	var st Status
	gs, body, err := FetchStatus(addr)
	if err != nil {
		return st, body, err
	}
	st.Status = gs
	if err := json.Unmarshal(body, &st); err != nil {
		return st, body, fmt.Errorf("%s/status: %w", addr, err)
	}
	return st, body, nil
}

// PrintAlarms prints the active alarms under the status tables.
func PrintAlarms(w io.Writer, alarms []AlarmStatus) {
	if len(alarms) == 0 {
		fmt.Fprintln(w, "\nActive alarms: none")
		return
	}
	fmt.Fprintln(w, "\nActive alarms:")
	for _, a := range alarms {
		fmt.Fprintf(w, "  %s severity %d: %s\n", a.Number, a.Severity, a.Text)
	}
}
