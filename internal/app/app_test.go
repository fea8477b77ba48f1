package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/client"
)

// freeUDPPort finds a UDP port for A's SCTP-over-UDP listener.
func freeUDPPort(t testing.TB) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

const yamlA = `point_code: 1
m3ua:
  transport: udp
  listen: 127.0.0.1:2905
  udp_port: %d
  peers: [{name: b, accept_from: 127.0.0.1, point_codes: [2]}]
circuit_groups: [{name: b, point_code: 2, cics: ["1-8"]}]
timers: {t22: 300ms}
congestion: {level1_delay: %s}
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
`

const yamlB = `point_code: 2
m3ua:
  transport: udp
  peers: [{name: a, connect: 127.0.0.1:2905, udp_port: %d, point_codes: [1]}]
circuit_groups: [{name: a, point_code: 1, cics: ["1-8"]}]
timers: {t22: 300ms}
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
`

type proc struct {
	run  *Running
	sigs chan os.Signal
	err  chan error
	path string
}

func start(t testing.TB, ctx context.Context, yaml string) *proc {
	t.Helper()
	return startDrain(t, ctx, yaml, 300*time.Millisecond)
}

func startDrain(t testing.TB, ctx context.Context, yaml string, drain time.Duration) *proc {
	t.Helper()
	p := &proc{sigs: make(chan os.Signal, 4), err: make(chan error, 1), path: filepath.Join(t.TempDir(), "isupgw.yaml")}
	if err := os.WriteFile(p.path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	ready := make(chan *Running, 1)
	out := io.Writer(io.Discard)
	if logOut != nil { // control_test.go keeps a gateway's log
		out = logOut
	}
	go func() {
		p.err <- Run(ctx, Options{ConfigPath: p.path, LogOut: out, Signals: p.sigs, DrainTimeout: drain,
			Ready: func(r *Running) { ready <- r }})
	}()
	select {
	case p.run = <-ready:
	case err := <-p.err:
		t.Fatalf("gateway did not start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("gateway did not start within 10 s")
	}
	return p
}

// eventually polls cond (bounded: 10 s).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func dial(t testing.TB, p *proc, incoming bool) *client.Client {
	t.Helper()
	c, err := client.Dial(context.Background(), "tcp", p.run.Host.TCPAddr().String(), client.Config{App: "test", Token: "secret", Incoming: incoming})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// answerAll answers every call offered to c.
func answerAll(ctx context.Context, c *client.Client) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-c.Events():
			if in, ok := e.(*client.Incoming); ok {
				_ = c.Alert(ctx, in.Call)
				_ = c.Answer(ctx, in.Call)
			}
		}
	}
}

// call places a call from c and waits until it is answered.
func call(t *testing.T, c *client.Client) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.Outseize(ctx, client.Outseize{DPC: 2, Called: "4930123456"})
	if err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case e := <-c.Events():
			switch x := e.(type) {
			case *client.Answered:
				if x.Call == s.Call {
					return s.Call
				}
			case *client.Released:
				if x.Call == s.Call {
					t.Fatalf("call released before answer: %+v", x)
				}
			}
		case <-ctx.Done():
			t.Fatal("no answer within 10 s")
		}
	}
}

func TestRunStatusReloadAndGracefulStop(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	udp := freeUDPPort(t)
	a := start(t, ctx, fmt.Sprintf(yamlA, udp, "10s"))
	b := start(t, ctx, fmt.Sprintf(yamlB, udp))
	for _, p := range []*proc{a, b} {
		eventually(t, "destination available and circuits reset", func() bool {
			st := p.run.Gateway.Status()
			return len(st.Destinations) == 1 && st.Destinations[0].Available && st.Circuits["idle"] == 8
		})
	}
	hostA, hostB := dial(t, a, false), dial(t, b, true)
	var wg sync.WaitGroup
	answerCtx, stopAnswer := context.WithCancel(ctx)
	wg.Add(1)
	go func() { defer wg.Done(); answerAll(answerCtx, hostB) }()
	defer func() { stopAnswer(); wg.Wait() }()

	id := call(t, hostA)

	// `isupgw status` against A shows the association, the destination and the
	// busy circuit.
	out := runStatus(t, a.run.MetricsAddr.String())
	for _, want := range []string{"isupgw point code 1", "b            active", "outgoing busy  1", "idle           7", "inbound   0"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}

	// SIGHUP with a new threshold: it applies, and the call survives.
	if err := os.WriteFile(a.path, []byte(fmt.Sprintf(yamlA, udp, "7s")), 0o644); err != nil {
		t.Fatal(err)
	}
	a.sigs <- syscall.SIGHUP
	eventually(t, "the new level 1 delay", func() bool {
		c := a.run.Gateway.Status().Congestion
		return c != nil && c.Level1DelayMS == 7000
	})
	if st := a.run.Gateway.Status(); st.Calls != 1 {
		t.Fatalf("the reload dropped the call: %d calls", st.Calls)
	}
	if err := hostA.Release(context.Background(), id, 16, 1); err != nil {
		t.Fatalf("releasing the call after the reload: %v", err)
	}
	eventually(t, "B idle after the release", func() bool { return b.run.Gateway.Status().Circuits["idle"] == 8 })

	// SIGTERM with a call up: A waits for it (300 ms), then releases it; B is
	// left with every circuit idle.
	call(t, hostA)
	a.sigs <- syscall.SIGTERM
	select {
	case err := <-a.err:
		if err != nil {
			t.Fatalf("A stopped with %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("A did not stop")
	}
	eventually(t, "B's circuits idle after A stopped", func() bool {
		st := b.run.Gateway.Status()
		return st.Circuits["idle"] == 8 && st.Calls == 0
	})
}

func runStatus(t *testing.T, addr string) string {
	t.Helper()
	st, _, err := FetchStatus(addr)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	PrintStatus(&b, st)
	return b.String()
}

// A second SIGTERM while the gateway waits for calls to end stops it at once:
// long before the drain timeout, with the call released (B's circuit idle).
func TestSecondStopSignalStopsAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	udp := freeUDPPort(t)
	a := startDrain(t, ctx, fmt.Sprintf(yamlA, udp, "10s"), 10*time.Minute)
	b := start(t, ctx, fmt.Sprintf(yamlB, udp))
	for _, p := range []*proc{a, b} {
		eventually(t, "destination available and circuits reset", func() bool {
			st := p.run.Gateway.Status()
			return len(st.Destinations) == 1 && st.Destinations[0].Available && st.Circuits["idle"] == 8
		})
	}
	hostA, hostB := dial(t, a, false), dial(t, b, true)
	var wg sync.WaitGroup
	answerCtx, stopAnswer := context.WithCancel(ctx)
	wg.Add(1)
	go func() { defer wg.Done(); answerAll(answerCtx, hostB) }()
	defer func() { stopAnswer(); wg.Wait() }()
	call(t, hostA)

	a.sigs <- syscall.SIGTERM
	a.sigs <- os.Interrupt // Ctrl-C, as an impatient user does
	select {
	case err := <-a.err:
		if err != nil {
			t.Fatalf("A stopped with %v", err)
		}
	case <-time.After(30 * time.Second): // the drain timeout is 10 minutes
		t.Fatal("A did not stop on the second signal")
	}
	eventually(t, "B's circuit idle: the call was released", func() bool {
		st := b.run.Gateway.Status()
		return st.Circuits["idle"] == 8 && st.Calls == 0
	})
}

// TestLogLines: JSON lines carry millisecond timestamps, and the console
// format writes no colour codes when its output is not a terminal.
func TestLogLines(t *testing.T) {
	var js, con bytes.Buffer
	l, err := newLogger(&js, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	l.Info().Msg("x")
	var line struct{ Time string }
	if err := json.Unmarshal(js.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if _, err := time.Parse(logTimeFormat, line.Time); err != nil || !strings.Contains(line.Time, ".") {
		t.Fatalf("timestamp %q: %v", line.Time, err)
	}
	l, _ = newLogger(&con, "console", "info")
	l.Warn().Str("alarm", "0x16").Msg("stack congestion")
	if strings.Contains(con.String(), "\x1b[") {
		t.Fatalf("colour codes in a non-terminal console log: %q", con.String())
	}
}
