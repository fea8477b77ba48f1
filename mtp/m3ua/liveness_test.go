package m3ua

import (
	"bufio"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/transport"
)

// The liveness fault test runs the SG in a child process (this test binary,
// re-run as TestLivenessPeerProcess), so the peer can really be killed
// (SIGKILL) and hung (SIGSTOP) while the ASP here, on the default heartbeat,
// must notice.

const livenessChildEnv = "M3UA_LIVENESS_CHILD_LISTEN"

// detectBound is generous (the defaults promise 3 to 4 s) so a loaded machine
// does not fail the test; the measured times are logged.
const detectBound = 12 * time.Second

// TestLivenessPeerProcess is the child: an SG listening on the address in the
// environment, or an ASP dialling it ("dial:" prefix), that prints its address
// and serves until killed.
func TestLivenessPeerProcess(t *testing.T) {
	arg := os.Getenv(livenessChildEnv)
	if arg == "" {
		t.Skip("helper process for TestLivenessDeadAndHungPeer")
	}
	cfg := Config{Role: RoleSG, Transport: transport.KindUDP,
		Peers: []Peer{{Name: "asp", From: lo, ASPID: 5, HasASPID: true, DPCs: []mtp.PointCode{2}}}}
	if dial, ok := strings.CutPrefix(arg, "dial:"); ok {
		cfg = Config{Role: RoleASP, Transport: transport.KindUDP,
			Peers: []Peer{{Name: "sg", Dial: netip.MustParseAddrPort(dial), ASPID: 5, HasASPID: true, DPCs: []mtp.PointCode{1}}}}
	} else {
		cfg.Listen = netip.MustParseAddrPort(arg)
	}
	e, err := New(cfg, WithBackoff(50*time.Millisecond, 500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range e.Events() {
		}
	}()
	go func() {
		for range e.Indications() {
		}
	}()
	fmt.Printf("ADDR %s\n", e.Addr())
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the parent goes
	os.Exit(0)
}

// startPeerProcess starts the child SG on listen and returns it with its address.
func startPeerProcess(t *testing.T, listen string) (*exec.Cmd, netip.AddrPort) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLivenessPeerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), livenessChildEnv+"="+listen)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "ADDR ") {
				lines <- strings.TrimPrefix(sc.Text(), "ADDR ")
			}
		}
	}()
	select {
	case l := <-lines:
		a, _ := netip.ParseAddrPort(l) // an ASP has no listening address
		return cmd, a
	case <-time.After(waitLimit):
		t.Fatal("peer process did not start")
		return nil, netip.AddrPort{}
	}
}

// waitDown waits for peer to be reported down and returns how long it took
// since t0 and why.
func waitDown(t *testing.T, e *Endpoint, peer string, t0 time.Time) (time.Duration, string) {
	t.Helper()
	ev := waitEvent(t, e, peer+" down", func(ev mtp.Event) bool {
		ps, ok := ev.(mtp.PeerState)
		return ok && ps.Peer == peer && ps.State == "down"
	}).(mtp.PeerState)
	return time.Since(t0), ev.Reason
}

// TestLivenessDeadAndHungPeer: an endpoint on the default liveness settings
// against a peer in another process, as the dialling ASP (peer: SG) and as
// the accepting SG (peer: ASP, whose association comes from an unconnected
// socket, so no ICMP error can give a killed peer away). When the peer process
// is stopped (SIGSTOP) or killed (SIGKILL), the association is declared down
// within the bound and the destination is no longer routed through it; when
// the peer returns (SIGCONT, or a new process) it is ACTIVE again.
func TestLivenessDeadAndHungPeer(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test with real processes")
	}
	for _, role := range []string{"asp", "sg"} {
		t.Run(role, func(t *testing.T) {
			var (
				e     *Endpoint
				peer  string
				child *exec.Cmd
				again func()
				dpc   mtp.PointCode
			)
			if role == "asp" {
				var addr netip.AddrPort
				child, addr = startPeerProcess(t, "127.0.0.1:0")
				peer, dpc = "sg", 1
				e = start(t, Config{Role: RoleASP, Transport: transport.KindUDP,
					Peers: []Peer{{Name: peer, Dial: addr, ASPID: 5, HasASPID: true, DPCs: []mtp.PointCode{dpc}}}},
					WithBackoff(50*time.Millisecond, 500*time.Millisecond))
				again = func() { startPeerProcess(t, addr.String()) }
			} else {
				peer, dpc = "asp", 2
				e = start(t, Config{Role: RoleSG, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0),
					Peers: []Peer{{Name: peer, From: lo, ASPID: 5, HasASPID: true, DPCs: []mtp.PointCode{dpc}}}})
				child, _ = startPeerProcess(t, "dial:"+e.Addr().String())
				again = func() { startPeerProcess(t, "dial:"+e.Addr().String()) }
			}
			waitState(t, e, peer, "active")
			// A message the SG queues for T(r) (the lost ASP's AS is pending,
			// RFC 4666 §4.3.4.4) is not routed through the lost peer.
			routed := func() bool {
				queued := e.Stats().RecoveryQueued.Load()
				return e.Peer(peer).Available() ||
					e.Transfer(&mtp.Message{Label: mtp.Label{OPC: 9, DPC: dpc, SI: mtp.SIISUP, SLS: 1}, Payload: []byte{1}}) == nil &&
						e.Stats().RecoveryQueued.Load() == queued
			}

			// Hung peer.
			if err := child.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			hung, why := waitDown(t, e, peer, t0)
			t.Logf("hung peer (SIGSTOP) declared down after %v (%s)", hung.Round(time.Millisecond), why)
			if hung > detectBound {
				t.Errorf("hung peer detected after %v, bound %v", hung, detectBound)
			}
			if routed() {
				t.Error("destination still routed through the hung peer")
			}
			if err := child.Process.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			t1 := time.Now()
			waitState(t, e, peer, "active")
			t.Logf("active again %v after SIGCONT", time.Since(t1).Round(time.Millisecond))

			// Dead peer.
			if err := child.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			t0 = time.Now()
			dead, why := waitDown(t, e, peer, t0)
			t.Logf("dead peer (SIGKILL) declared down after %v (%s)", dead.Round(time.Millisecond), why)
			if dead > detectBound {
				t.Errorf("dead peer detected after %v, bound %v", dead, detectBound)
			}
			if routed() {
				t.Error("destination still routed through the dead peer")
			}
			_ = child.Wait()
			again()
			t1 = time.Now()
			waitState(t, e, peer, "active")
			t.Logf("active again %v after a new peer process started", time.Since(t1).Round(time.Millisecond))
		})
	}
}
