//go:build linux

package fault

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/isupgw/isupgw/gateway"
	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/mtp/transport"
)

// Bounds: generous, for a loaded 2-core CI machine. The defaults promise
// detection in 3 to 4 s (docs/liveness.md).
const (
	detectBound  = 10 * time.Second // peer killed or hung -> declared down
	recoverBound = 15 * time.Second // peer back -> destination resumed
	settleBound  = 30 * time.Second // load stopped -> every circuit idle
)

var lo = netip.MustParseAddr("127.0.0.1")

// TestFaults runs gateway A (point code 1) and gateway B (point code 2) as
// processes of the real binary on loopback, with hosts on their host APIs,
// and injects the faults of issue 14 one after the other; each subtest first
// waits for the pair to be healthy (association active both ways, every
// circuit idle).
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("fault suite: skipped with -short (it runs two gateway processes for about a minute)")
	}
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	a, b := configs(t, bin, dir)
	a.start(t)
	b.start(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(a.logTail(60))
			t.Log(b.logTail(60))
		}
	})
	t.Logf("pair up and idle after %v", pairHealthy(t, a, b, 30*time.Second).Round(time.Millisecond))
	ans := startAnswerer(t, b.hostAddr)

	t.Run("d_forged_asp_up", func(t *testing.T) { forgedASPUp(t, a, b) })
	t.Run("e_idle_pre_hello", func(t *testing.T) { idlePreHello(t, a, b) })
	t.Run("f_flooding_host", func(t *testing.T) { floodingHost(t, a, b) })
	t.Run("c_init_flood", func(t *testing.T) { initFloodDuringCalls(t, a, b) })
	t.Run("b_peer_stopped", func(t *testing.T) { peerStopped(t, a, b) })
	t.Run("a_peer_killed", func(t *testing.T) { peerKilled(t, a, b, ans) })
}

// forgedASPUp: while B's association is alive and carrying calls, a new
// association from B's configured address (127.0.0.1) sends an ASP Up
// without ASP Identifier. A refuses it with ERR "Refused - Management
// Blocking" (0x0D, RFC 4666 §3.8.1) and closes it; B's association stays
// active throughout and no call is refused.
func forgedASPUp(t *testing.T, a, b *gw) {
	pairHealthy(t, a, b, 30*time.Second)
	h := dialHost(t, a.hostAddr, "calls-d")
	l := startLoad(h, 2, 20, 100*time.Millisecond)
	defer l.stop()
	watch := watchAssociation(a, "b")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := transport.Dial(ctx, transport.KindUDP, netip.AddrPortFrom(lo, uint16(a.udpPort)),
		transport.WithSCTPPorts(sctpPort, sctpPort))
	if err != nil {
		t.Fatalf("the forged association was not even established (the address filter should let 127.0.0.1 in): %v", err)
	}
	defer conn.Close()
	t0 := time.Now()
	if err := conn.WriteMsg(m3uaASPUp, 0, transport.PPIDM3UA); err != nil {
		t.Fatal(err)
	}
	type reply struct {
		msg []byte
		err error
	}
	replies := make(chan reply, 16)
	go func() {
		for {
			buf := make([]byte, 512)
			n, _, _, err := conn.ReadMsg(buf)
			replies <- reply{buf[:n], err}
			if err != nil {
				return
			}
		}
	}()
	var code uint32
	gotErr, closed := false, false
	timeout := time.After(10 * time.Second)
	for !closed {
		select {
		case r := <-replies:
			if r.err != nil {
				closed = true
				break
			}
			if c, ok := m3uaErrorCode(r.msg); ok {
				code, gotErr = c, true
			} else {
				t.Errorf("forged ASP Up answered with % x, want only ERR", r.msg)
			}
		case <-timeout:
			t.Fatalf("no ERR and no close 10 s after the forged ASP Up (ERR seen %v)", gotErr)
		}
	}
	t.Logf("forged ASP Up: ERR 0x%02X (seen %v), association closed %v after it", code, gotErr, time.Since(t0).Round(time.Millisecond))
	if !gotErr || code != 0x0D {
		t.Errorf("forged ASP Up: ERR %v code 0x%02X, want ERR 0x0D (Refused - Management Blocking)", gotErr, code)
	}
	time.Sleep(2 * time.Second) // calls keep flowing on B's association after the attempt
	l.stop()
	states := watch()
	t.Logf("calls during the attempt: %s; A's association to B was %v while it ran", l, states)
	if !l.clean() || l.completed == 0 {
		t.Errorf("calls were refused or failed around the forged ASP Up: %s", l)
	}
	if len(states) != 1 || !states["active"] {
		t.Errorf("B's association left active during the forged ASP Up: states seen %v", states)
	}
}

// watchAssociation polls A's association to peer until the returned
// function is called, which returns every state seen.
func watchAssociation(g *gw, peer string) func() map[string]bool {
	stop := make(chan struct{})
	done := make(chan map[string]bool, 1)
	go func() {
		seen := map[string]bool{}
		for {
			if st, err := g.status(); err == nil {
				seen[assoc(st, peer)] = true
			}
			select {
			case <-stop:
				done <- seen
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return func() map[string]bool { close(stop); return <-done }
}

// idlePreHello: 300 TCP connections to A's host API that never say hello;
// a real host still connects and places calls, and the gateway closes all
// but at most its pre-hello limit (64 by default) of the idle ones.
func idlePreHello(t *testing.T, a, b *gw) {
	pairHealthy(t, a, b, 30*time.Second)
	const idle = 300
	conns := make([]net.Conn, 0, idle)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range idle {
		c, err := net.DialTimeout("tcp", a.hostAddr, 5*time.Second)
		if err != nil {
			t.Fatalf("idle connection %d: %v", len(conns)+1, err)
		}
		conns = append(conns, c)
	}
	t0 := time.Now()
	h := dialHost(t, a.hostAddr, "calls-e")
	hello := time.Since(t0)
	l := startLoad(h, 2, 20, 100*time.Millisecond)
	time.Sleep(1500 * time.Millisecond) // the load's duration
	l.stop()
	// Which idle connections has the gateway closed? Closed ones read EOF
	// at once, open ones time out.
	var closedByA atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(300 * time.Millisecond)
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetReadDeadline(deadline)
			var b [1]byte
			if _, err := c.Read(b[:]); err != nil {
				if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
					closedByA.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d idle pre-hello connections: a host said hello in %v and placed calls: %s; A closed %d of the idle connections",
		idle, hello.Round(time.Millisecond), l, closedByA.Load())
	if !l.clean() || l.completed == 0 {
		t.Errorf("host behind %d idle connections: %s", idle, l)
	}
	if n := closedByA.Load(); n < idle-64 {
		t.Errorf("A closed %d of %d idle connections; its pre-hello limit (64) should have closed at least %d", n, idle, idle-64)
	}
}

// floodingHost: one host writes outseizes as fast as it can for 3 s (to
// point code 3, paused: each costs A's stack a refusal) while another host
// places calls to B at a modest rate: the other host gets no refusal.
func floodingHost(t *testing.T, a, b *gw) {
	pairHealthy(t, a, b, 30*time.Second)
	modest := dialHost(t, a.hostAddr, "modest")

	nc, err := net.DialTimeout("tcp", a.hostAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReaderSize(nc, 1<<16)
	fmt.Fprintf(nc, `{"type":"hello","seq":0,"version":1,"token":%q,"app":"flood"}`+"\n", token)
	line, err := br.ReadSlice('\n')
	if err != nil || !bytes.Contains(line, []byte(`"type":"ack"`)) {
		t.Fatalf("flooder hello: %q %v", line, err)
	}
	var sent, acks, shareRefused, unavailable, otherNaks atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // writer: as fast as A reads, bounded in count
		defer wg.Done()
		var chunk bytes.Buffer
		for seq := 1; seq <= 20_000_000; {
			select {
			case <-stop:
				return
			default:
			}
			chunk.Reset()
			for range 500 {
				fmt.Fprintf(&chunk, `{"type":"outseize","seq":%d,"dpc":3,"called":"4930"}`+"\n", seq)
				seq++
			}
			if _, err := nc.Write(chunk.Bytes()); err != nil {
				return
			}
			sent.Add(500)
		}
	}()
	go func() { // reader: until the connection closes
		defer wg.Done()
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			switch {
			case bytes.Contains(line, []byte(`"type":"ack"`)):
				acks.Add(1)
			case !bytes.Contains(line, []byte(`"type":"nak"`)):
			case bytes.Contains(line, []byte(`"status":12,`)):
				shareRefused.Add(1)
			case bytes.Contains(line, []byte(`"status":258,`)):
				unavailable.Add(1)
			default:
				otherNaks.Add(1)
			}
		}
	}()
	t0 := time.Now()
	delays := sampleOutboundDelay(a)
	l := startLoad(modest, 2, 20, 100*time.Millisecond)
	time.Sleep(3 * time.Second) // the flood's duration
	l.stop()
	floodFor := time.Since(t0)
	maxDelay, level := delays()
	close(stop)
	nc.(*net.TCPConn).SetLinger(0) // reset: A need not read what the flooder left
	nc.Close()
	wg.Wait()
	answered := acks.Load() + shareRefused.Load() + unavailable.Load() + otherNaks.Load()
	t.Logf("flooding host for %v: sent %d outseizes, answered %d (%.0f/s: %d refused for its share 0x0C, %d destination unavailable, %d other naks, %d acks); other host: %s",
		floodFor.Round(time.Millisecond), sent.Load(), answered, float64(answered)/floodFor.Seconds(),
		shareRefused.Load(), unavailable.Load(), otherNaks.Load(), acks.Load(), l)
	t.Logf("A's outbound probe delay during the flood: at most %.1f ms (level 1 at 1000 ms, or 500 ms on average); highest outbound level %d", maxDelay, level)
	if !l.clean() || l.completed == 0 {
		t.Errorf("the other host's calls were refused or failed while one host flooded: %s", l)
	}
	if answered < 10_000 {
		t.Errorf("the flood was not one: %d outseizes answered in %v", answered, floodFor)
	}
	if acks.Load() != 0 {
		t.Errorf("%d outseizes to the paused point code 3 were acked", acks.Load())
	}
}

// sampleOutboundDelay polls A's status until the returned function is
// called, which returns the highest outbound probe delay (ms) and level seen.
func sampleOutboundDelay(g *gw) func() (float64, int) {
	stop := make(chan struct{})
	type peak struct {
		delay float64
		level int
	}
	done := make(chan peak, 1)
	go func() {
		var p peak
		for {
			if st, err := g.status(); err == nil && st.Congestion != nil {
				p.delay = max(p.delay, st.Congestion.OutboundDelayMS)
				p.level = max(p.level, st.Congestion.OutboundLevel)
			}
			select {
			case <-stop:
				done <- p
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() (float64, int) { close(stop); p := <-done; return p.delay, p.level }
}

// initFloodDuringCalls: 10,000 SCTP-over-UDP INITs at A's M3UA port, a
// quarter with a bad CRC32c, from 127.0.0.1 (B's address) and 127.0.0.3
// (peer c's, configured) and from unconfigured 127.0.0.x, while calls run.
// A builds no state for them (RFC 9260 §5.1: the stateless cookie): its
// heap and goroutines stay within a bound and every call completes.
func initFloodDuringCalls(t *testing.T, a, b *gw) {
	pairHealthy(t, a, b, 30*time.Second)
	names := []string{"go_memstats_heap_inuse_bytes", "process_resident_memory_bytes", "go_goroutines"}
	base, err := a.metricValues(names...)
	if err != nil {
		t.Fatal(err)
	}
	peak := map[string]float64{}
	var pmu sync.Mutex
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // A's peak memory and goroutines while the flood runs
		defer close(sampled)
		for {
			if m, err := a.metricValues(names...); err == nil {
				pmu.Lock()
				for k, v := range m {
					peak[k] = max(peak[k], v)
				}
				pmu.Unlock()
			}
			select {
			case <-stopSampling:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	h := dialHost(t, a.hostAddr, "calls-c")
	l := startLoad(h, 2, 30, 200*time.Millisecond)
	time.Sleep(500 * time.Millisecond) // calls under way before the flood

	var srcs []net.IP
	for i := 1; i <= 9; i++ {
		srcs = append(srcs, net.IPv4(127, 0, 0, byte(i)))
	}
	configured := map[string]bool{"127.0.0.1": true, "127.0.0.3": true}
	f, err := floodINITs(&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: a.udpPort}, srcs, configured, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // calls go on after the flood
	l.stop()
	close(stopSampling)
	<-sampled
	after, err := a.metricValues(names...)
	if err != nil {
		t.Fatal(err)
	}
	mb := func(v float64) float64 { return v / (1 << 20) }
	t.Logf("INIT flood: %d sent in %v (%d with a bad CRC32c, %d good ones from configured addresses), %d INIT ACKs back, %d other replies",
		f.sent, f.took.Round(time.Millisecond), f.badCRC, f.fromConfigured, f.initAcks.Load(), f.other.Load())
	t.Logf("A before/peak/after: heap in use %.1f/%.1f/%.1f MB, RSS %.1f/%.1f/%.1f MB, goroutines %.0f/%.0f/%.0f; calls: %s",
		mb(base[names[0]]), mb(peak[names[0]]), mb(after[names[0]]), mb(base[names[1]]), mb(peak[names[1]]), mb(after[names[1]]),
		base[names[2]], peak[names[2]], after[names[2]], l)
	if f.sent != 10_000 {
		t.Errorf("sent %d INITs of 10000", f.sent)
	}
	if !l.clean() || l.completed == 0 {
		t.Errorf("calls during the INIT flood: %s", l)
	}
	// Before the stateless listener each INIT cost about 460 KB and 5
	// goroutines: 10,000 of them would be gigabytes.
	if d := peak[names[0]] - base[names[0]]; d > 64<<20 {
		t.Errorf("A's heap in use grew by %.1f MB during the flood (bound 64 MB)", mb(d))
	}
	if d := peak[names[1]] - base[names[1]]; d > 128<<20 {
		t.Errorf("A's RSS grew by %.1f MB during the flood (bound 128 MB)", mb(d))
	}
	if d := peak[names[2]] - base[names[2]]; d > 200 {
		t.Errorf("A's goroutines grew by %.0f during the flood (bound 200)", d)
	}
	if f.initAcks.Load() > f.fromConfigured {
		t.Errorf("%d INIT ACKs for %d good INITs from configured addresses: bad CRCs or unknown sources were answered",
			f.initAcks.Load(), f.fromConfigured)
	}
}

// peerStopped: B is stopped (SIGSTOP) for 8 s under call load, then
// continued. A declares B down (the host hears alarm 0x17, an outseize is
// refused with 0x0102), B's association comes back, calls complete again,
// and once the load stops no circuit is left busy on either side.
func peerStopped(t *testing.T, a, b *gw) {
	pairHealthy(t, a, b, 30*time.Second)
	h := dialHost(t, a.hostAddr, "calls-b")
	l := startLoad(h, 2, 30, 200*time.Millisecond)
	time.Sleep(time.Second) // steady load before the fault

	t0 := time.Now()
	b.signal(t, syscall.SIGSTOP)
	continued := false
	defer func() {
		if !continued {
			_ = b.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	down, ok := h.waitAlarm(alarmDestinationUnavailable, 2, false, t0, detectBound)
	if !ok {
		l.stop()
		t.Fatalf("B stopped: A raised no destination-unavailable alarm for point code 2 within %v; load %s", detectBound, l)
	}
	detect := down.Sub(t0)
	refusedStatus := probeRefusal(t, h)
	time.Sleep(8*time.Second - time.Since(t0)) // B stays stopped for 8 s
	paused, _ := a.status()
	t.Logf("A before SIGCONT: %d calls, circuits %v", paused.Calls, paused.Circuits)
	checkPaused(t, paused)
	b.signal(t, syscall.SIGCONT)
	continued = true
	t1 := time.Now()
	up, ok := h.waitAlarm(alarmDestinationUnavailable, 2, true, t1, recoverBound)
	l.stop()
	if !ok {
		t.Fatalf("B continued: point code 2 not resumed within %v; load %s", recoverBound, l)
	}
	recovered := up.Sub(t1)
	after := afterRecovery(t, h)
	settle, stuckA, statesA := waitIdle(a, settleBound)
	_, stuckB, statesB := waitIdle(b, settleBound)
	t.Logf("B stopped 8 s: A declared it down after %v (outseize then refused 0x%04X); resumed %v after SIGCONT; load through it: %s; after: %s; circuits idle %v after the load (stuck: A %d %v, B %d %v)",
		detect.Round(time.Millisecond), uint16(refusedStatus), recovered.Round(time.Millisecond), l, after,
		settle.Round(time.Millisecond), stuckA, statesA, stuckB, statesB)
	checkFault(t, h, t0, detect, refusedStatus, l, after, stuckA, stuckB)
}

// peerKilled: B is killed (SIGKILL) under call load; after A has declared
// it down, B is started again. As for the stop, plus: the answering host
// reconnects to the new B and calls complete.
func peerKilled(t *testing.T, a, b *gw, ans *answerer) {
	pairHealthy(t, a, b, 30*time.Second)
	h := dialHost(t, a.hostAddr, "calls-a")
	l := startLoad(h, 2, 30, 200*time.Millisecond)
	time.Sleep(time.Second) // steady load before the fault

	t0 := time.Now()
	b.kill(t)
	down, ok := h.waitAlarm(alarmDestinationUnavailable, 2, false, t0, detectBound)
	if !ok {
		l.stop()
		t.Fatalf("B killed: A raised no destination-unavailable alarm for point code 2 within %v; load %s", detectBound, l)
	}
	detect := down.Sub(t0)
	st, _ := a.status()
	refusedStatus := probeRefusal(t, h)
	time.Sleep(time.Second) // B stays dead a little after detection
	paused, _ := a.status()
	t.Logf("A 1 s after declaring B down: %d calls, circuits %v", paused.Calls, paused.Circuits)
	checkPaused(t, paused)
	t1 := time.Now()
	b.start(t)
	up, ok := h.waitAlarm(alarmDestinationUnavailable, 2, true, t1, recoverBound)
	l.stop()
	if !ok {
		t.Fatalf("B restarted: point code 2 not resumed within %v; load %s", recoverBound, l)
	}
	recovered := up.Sub(t1)
	after := afterRecovery(t, h)
	settle, stuckA, statesA := waitIdle(a, settleBound)
	_, stuckB, statesB := waitIdle(b, settleBound)
	ans.mu.Lock()
	dials := ans.dials
	ans.mu.Unlock()
	t.Logf("B killed: A declared it down after %v (association %q, outseize then refused 0x%04X); resumed %v after the restart (answering host connected %d times in all); load through it: %s; after: %s; circuits idle %v after the load (stuck: A %d %v, B %d %v)",
		detect.Round(time.Millisecond), assoc(st, "b"), uint16(refusedStatus), recovered.Round(time.Millisecond), dials, l, after,
		settle.Round(time.Millisecond), stuckA, statesA, stuckB, statesB)
	checkFault(t, h, t0, detect, refusedStatus, l, after, stuckA, stuckB)
}

// probeRefusal places one call while B is down: it must be refused.
func probeRefusal(t *testing.T, h *host) wire.Status {
	t.Helper()
	o := h.call(2, 0)
	if o.completed || o.failure != "" {
		t.Errorf("outseize to the downed peer: %+v, want refused with 0x0102", o)
	}
	return o.refused
}

// afterRecovery places calls for 2 s once the peer is back: calls complete
// again. A call may find its circuit still being reset just after the
// resume, so the load starts once a first call has completed (within 10 s).
func afterRecovery(t *testing.T, h *host) *load {
	t.Helper()
	t0 := time.Now()
	for time.Since(t0) < 10*time.Second {
		if h.call(2, 0).completed {
			break
		}
		time.Sleep(100 * time.Millisecond) // retrying a call
	}
	l := startLoad(h, 2, 30, 100*time.Millisecond)
	time.Sleep(2 * time.Second) // the load's duration
	return l.stop()
}

// checkPaused: while B is down, A has released every call towards it
// (those in set-up with cause 41 at the pause, answered ones as their hosts
// release them) and no circuit is busy; circuits whose REL waits for the
// resume are "releasing".
func checkPaused(t *testing.T, st gateway.Status) {
	t.Helper()
	busy := st.Circuits["outgoing busy"] + st.Circuits["incoming busy"]
	if st.Calls != 0 || busy != 0 {
		t.Errorf("A with B down: %d calls and %d circuits busy, want none (calls in set-up released at the pause)", st.Calls, busy)
	}
}

func checkFault(t *testing.T, h *host, since time.Time, detect time.Duration, refused wire.Status, through, after *load, stuckA, stuckB int) {
	t.Helper()
	// Calls in set-up when the peer went are released when its destination
	// is paused (cause 41), not left waiting for T7 (20 s).
	through.mu.Lock()
	if n := through.failed[noAnswer]; n > 0 {
		t.Errorf("%d calls in set-up through the fault got no answer and no release within 10 s", n)
	}
	through.mu.Unlock()
	// The IAMs lost with the association are not the destination's failures
	// (issue 14 item 2): no out of service for T7 (the pause itself takes
	// the destination out of service until the resume, by design).
	for _, al := range h.alarmsSince(since) {
		if reason, _ := al.Data["reason"].(string); al.Number == alarmDestinationOutOfService && !al.Cleared &&
			al.Data["dpc"] == 2.0 && strings.Contains(reason, "T7") {
			t.Errorf("A declared point code 2 out of service %v after the fault: %s", al.at.Sub(since).Round(time.Millisecond), reason)
		}
	}
	if detect > detectBound {
		t.Errorf("detected after %v, bound %v", detect, detectBound)
	}
	if refused != wire.StatusDestinationUnavailable {
		t.Errorf("outseize while the peer is down refused with 0x%04X, want 0x0102 (destination unavailable)", uint16(refused))
	}
	if !after.clean() || after.completed == 0 {
		t.Errorf("calls after recovery: %s", after)
	}
	if stuckA != 0 || stuckB != 0 {
		t.Errorf("circuits not idle %v after the load: A %d, B %d", settleBound, stuckA, stuckB)
	}
}
