// Package python runs the Python host API example against real gateways.
package python

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/isupgw/isupgw/internal/app"
	"github.com/isupgw/isupgw/internal/lockedbuf"
)

const token = "s3cret"

// The answering mode takes the call the calling mode places: two gateways
// on loopback, place_call.py --answer on B's host API and place_call.py on
// A's; both exit 0 once the answered call is released.
func TestAnswerAndPlaceCall(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the Python example is not run")
	}
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := udp.LocalAddr().(*net.UDPAddr).Port
	udp.Close()
	a := start(t, fmt.Sprintf(`point_code: 1
m3ua:
  transport: udp
  listen: 127.0.0.1:2905
  udp_port: %d
  peers: [{name: b, accept_from: 127.0.0.1, point_codes: [2]}]
circuit_groups: [{name: b, point_code: 2, cics: ["1-8"]}]
host_api: {tcp: "127.0.0.1:0", token: %s}
metrics: 127.0.0.1:0
`, port, token))
	b := start(t, fmt.Sprintf(`point_code: 2
m3ua:
  transport: udp
  peers: [{name: a, connect: 127.0.0.1:2905, udp_port: %d, point_codes: [1]}]
circuit_groups: [{name: a, point_code: 1, cics: ["1-8"]}]
host_api: {tcp: "127.0.0.1:0", token: %s}
metrics: 127.0.0.1:0
`, port, token))
	for deadline := time.Now().Add(10 * time.Second); ; {
		st := a.Gateway.Status()
		if len(st.Destinations) == 1 && st.Destinations[0].Available && st.Circuits["idle"] == 8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B not available to A within 10 s: %+v", st)
		}
		time.Sleep(10 * time.Millisecond) // polling a start-up, bounded
	}

	answerer := exec.Command(py, "place_call.py", "--tcp", b.Host.TCPAddr().String(), "--token", token, "--answer", "--count", "1")
	answerOut := &lockedbuf.Buffer{}
	answerer.Stdout, answerer.Stderr = answerOut, answerOut
	if err := answerer.Start(); err != nil {
		t.Fatal(err)
	}
	answered := make(chan error, 1)
	go func() { answered <- answerer.Wait() }()
	// Wait until B's host API has the answering host before calling.
	for deadline := time.Now().Add(10 * time.Second); b.Host.Metrics().ConnectionsOpen == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("the answering host did not connect:\n%s", answerOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(answerOut.String(), `<< {"type":"ack","seq":1`); {
		if time.Now().After(deadline) {
			t.Fatalf("the answering host's hello was not acknowledged:\n%s", answerOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}

	caller, err := exec.Command(py, "place_call.py", "--tcp", a.Host.TCPAddr().String(), "--token", token,
		"--dpc", "2", "--called", "4930123456", "--timeout", "10").CombinedOutput()
	if err != nil {
		t.Fatalf("caller: %v\n%s\nanswerer:\n%s", err, caller, answerOut.String())
	}
	for _, want := range []string{`"type":"answered"`, `>> {"type":"release"`, `"type":"released"`} {
		if !strings.Contains(string(caller), want) {
			t.Errorf("caller output lacks %s:\n%s", want, caller)
		}
	}
	select {
	case err := <-answered:
		if err != nil {
			t.Errorf("answerer: %v", err)
		}
	case <-time.After(10 * time.Second):
		_ = answerer.Process.Kill()
		t.Fatalf("the answerer did not exit after the call was released:\n%s", answerOut.String())
	}
	for _, want := range []string{`"incoming":true`, `<< {"type":"incoming"`, `>> {"type":"alert"`, `>> {"type":"answer"`, `<< {"type":"released"`} {
		if !strings.Contains(answerOut.String(), want) {
			t.Errorf("answerer output lacks %s:\n%s", want, answerOut.String())
		}
	}
}

func start(t *testing.T, y string) *app.Running {
	t.Helper()
	path := filepath.Join(t.TempDir(), "isupgw.yaml")
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *app.Running, 1)
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, app.Options{ConfigPath: path, LogOut: io.Discard, Ready: func(r *app.Running) { ready <- r }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("gateway: %v", err)
		}
	})
	select {
	case r := <-ready:
		return r
	case err := <-done:
		t.Fatalf("gateway did not start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("gateway did not start within 10 s")
	}
	return nil
}
