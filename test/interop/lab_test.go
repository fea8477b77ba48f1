// Package interop runs isupgw against peers nobody here wrote: Debian's
// osmo-stp in a qemu guest (test/interop/lab.sh), reached over SCTP
// encapsulated in UDP and over raw SCTP, from inside a network namespace
// the lab creates, so every address used exists only there.
//
// The tests are heavy (a guest boots under software emulation), so they
// run only when ISUPGW_INTEROP=1 or CI=true (ISUPGW_INTEROP=0 wins over
// CI), and only as root on a host with apt; otherwise they skip at once
// with the reason.
//
// Gateways A and B run in the test process (internal/app.Run, the code of
// `isupgw run`); gateway C is the isupgw binary inside the guest, over
// kernel SCTP. Full calls go between them through osmo-stp.
//
// TestMain builds and boots the lab once, then re-runs this test binary
// inside the namespace (ip netns exec), where the tests themselves run,
// and takes the lab down at the end.
package interop

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Environment.
const (
	envEnable = "ISUPGW_INTEROP" // 1: run the interop tests
	envInner  = "ISUPGW_INTEROP_INNER"
	skipCode  = 77 // lab.sh: the lab cannot run on this host
)

// lab is the running lab (inside the namespace); nil when skipped.
var (
	lab        *Lab
	skipReason string
)

// Side is one gateway's place in the lab: its ASP at osmo-stp.
type Side struct {
	Name      string // osmo-stp's ASP name, e.g. "asp-a"
	AS        string // osmo-stp's AS name
	PC        uint32 // the gateway's point code
	RC        uint32 // routing context of its AS
	LocalPort uint16 // SCTP port the gateway must use: osmo-stp matches ASPs by it
}

// Lab holds the lab's addresses and identities, as lab.sh defines them.
type Lab struct {
	Netns        string
	HostIP       netip.Addr // the namespace's end of the tap
	GuestIP      netip.Addr // the guest, where osmo-stp runs
	M3UAPort     uint16     // osmo-stp's M3UA port (SCTP)
	UDPEncapPort uint16     // the guest kernel's SCTP-over-UDP port
	VTYPort      uint16
	STPPC        uint32
	A, B         Side
	// C is gateway C, the isupgw binary inside the guest (kernel SCTP from
	// the guest's own address); lab.sh starts it once osmo-stp listens.
	C Side
	// P1 and P2 are an active/standby pair: two ASPs of one AS (as-p, one
	// point code, override mode), from two SCTP ports.
	P1, P2 Side
	// D and E are two more gateways with point codes of their own (with A:
	// N gateways by point code).
	D, E Side
	// SCTP names the guest kernel's failure detection settings (lab.sh sets
	// the net.sctp sysctls before osmo-stp starts), for the record.
	SCTP string
	// GWAPI and GWMetrics are gateway C's host API and metrics (/status)
	// addresses, on the guest's address; GWToken is its host API token.
	GWAPI, GWMetrics netip.AddrPort
	GWToken          string
	GWCICs           string // the circuits between each pair of gateways, e.g. "1-32"
	Run              string // lab.sh's run folder (console log)
}

// STPRaw is osmo-stp's M3UA address for the raw and kernel transports.
func (l *Lab) STPRaw() netip.AddrPort { return netip.AddrPortFrom(l.GuestIP, l.M3UAPort) }

// STPUDP is the UDP address of the guest's SCTP-over-UDP tunnel; the SCTP
// port inside is M3UAPort.
func (l *Lab) STPUDP() netip.AddrPort { return netip.AddrPortFrom(l.GuestIP, l.UDPEncapPort) }

// VTY is osmo-stp's VTY address (inside the namespace).
func (l *Lab) VTY() string { return netip.AddrPortFrom(l.GuestIP, l.VTYPort).String() }

// Local is the address a side binds (raw) or names in its SCTP header (udp).
func (l *Lab) Local(s Side) netip.AddrPort { return netip.AddrPortFrom(l.HostIP, s.LocalPort) }

// Console returns the guest's console so far (osmo-stp logs there).
func (l *Lab) Console() string {
	b, _ := os.ReadFile(filepath.Join(l.Run, "console.log"))
	return string(b)
}

func labScript() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "lab.sh")
}

// loadLab reads the lab's definition from `lab.sh env`.
func loadLab() (*Lab, error) {
	out, err := exec.Command("bash", labScript(), "env").Output()
	if err != nil {
		return nil, fmt.Errorf("lab.sh env: %w", err)
	}
	v := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, val, ok := strings.Cut(sc.Text(), "="); ok {
			v[k] = val
		}
	}
	var errs []error
	addr := func(k string) netip.Addr {
		a, err := netip.ParseAddr(v[k])
		errs = append(errs, err)
		return a
	}
	num := func(k string, bits int) uint64 {
		n, err := strconv.ParseUint(v[k], 10, bits)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k, err))
		}
		return n
	}
	l := &Lab{
		Netns: v["LAB_NETNS"], HostIP: addr("LAB_HOST_IP"), GuestIP: addr("LAB_GUEST_IP"),
		M3UAPort: uint16(num("LAB_M3UA_PORT", 16)), UDPEncapPort: uint16(num("LAB_UDP_ENCAP_PORT", 16)),
		VTYPort: uint16(num("LAB_VTY_PORT", 16)), STPPC: uint32(num("LAB_PC_STP", 24)),
		A: Side{Name: "asp-a", AS: "as-a", PC: uint32(num("LAB_PC_A", 24)), RC: uint32(num("LAB_RC_A", 32)),
			LocalPort: uint16(num("LAB_ASP_A_PORT", 16))},
		B: Side{Name: "asp-b", AS: "as-b", PC: uint32(num("LAB_PC_B", 24)), RC: uint32(num("LAB_RC_B", 32)),
			LocalPort: uint16(num("LAB_ASP_B_PORT", 16))},
		C: Side{Name: "asp-c", AS: "as-c", PC: uint32(num("LAB_PC_C", 24)), RC: uint32(num("LAB_RC_C", 32)),
			LocalPort: uint16(num("LAB_ASP_C_PORT", 16))},
		P1: Side{Name: "asp-p1", AS: "as-p", PC: uint32(num("LAB_PC_P", 24)), RC: uint32(num("LAB_RC_P", 32)),
			LocalPort: uint16(num("LAB_ASP_P1_PORT", 16))},
		P2: Side{Name: "asp-p2", AS: "as-p", PC: uint32(num("LAB_PC_P", 24)), RC: uint32(num("LAB_RC_P", 32)),
			LocalPort: uint16(num("LAB_ASP_P2_PORT", 16))},
		D: Side{Name: "asp-d", AS: "as-d", PC: uint32(num("LAB_PC_D", 24)), RC: uint32(num("LAB_RC_D", 32)),
			LocalPort: uint16(num("LAB_ASP_D_PORT", 16))},
		E: Side{Name: "asp-e", AS: "as-e", PC: uint32(num("LAB_PC_E", 24)), RC: uint32(num("LAB_RC_E", 32)),
			LocalPort: uint16(num("LAB_ASP_E_PORT", 16))},
		SCTP: fmt.Sprintf("hb_interval %s ms, rto_min %s ms, rto_max %s ms, association_max_retrans %s",
			v["LAB_SCTP_HB_INTERVAL"], v["LAB_SCTP_RTO_MIN"], v["LAB_SCTP_RTO_MAX"], v["LAB_SCTP_MAX_RETRANS"]),
		GWToken: v["LAB_GW_TOKEN"], GWCICs: v["LAB_GW_CICS"],
		Run: v["LAB_RUN"],
	}
	l.GWAPI = netip.AddrPortFrom(l.GuestIP, uint16(num("LAB_GW_API_PORT", 16)))
	l.GWMetrics = netip.AddrPortFrom(l.GuestIP, uint16(num("LAB_GW_METRICS_PORT", 16)))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return l, nil
}

// needLab skips the test unless the lab is up.
func needLab(t testing.TB) *Lab {
	t.Helper()
	if lab == nil {
		t.Skip(skipReason)
	}
	return lab
}

func enabled() string {
	switch v := os.Getenv(envEnable); {
	case v == "0":
		return "interop lab off: " + envEnable + "=0"
	case v != "1" && os.Getenv("CI") != "true":
		return "interop lab off: set " + envEnable + "=1 (CI=true turns it on too) to boot osmo-stp in qemu"
	}
	if os.Geteuid() != 0 {
		return "interop lab needs root (network namespace, tap device, apt)"
	}
	return ""
}

func TestMain(m *testing.M) {
	if os.Getenv(envInner) == "1" {
		l, err := loadLab()
		if err != nil {
			fmt.Fprintln(os.Stderr, "interop:", err)
			os.Exit(1)
		}
		lab = l
		os.Exit(m.Run())
	}
	if skipReason = enabled(); skipReason != "" {
		os.Exit(m.Run())
	}
	os.Exit(outer(m))
}

// outer builds and boots the lab, runs the tests inside its namespace and
// takes it down, also on SIGINT and SIGTERM.
func outer(m *testing.M) int {
	t0 := time.Now()
	unlock, err := lockLab(5 * time.Minute)
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		return 1
	}
	defer unlock()
	code, msg, err := runLab("build")
	if code == skipCode {
		skipReason = "interop lab cannot run here: " + msg
		return m.Run()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop: lab.sh build:", err)
		return 1
	}
	l, err := loadLab()
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-sig:
			_, _, _ = runLab("down")
			os.Exit(2)
		case <-stop:
		}
	}()
	defer func() { _, _, _ = runLab("down") }()
	if _, _, err := runLab("up"); err != nil {
		fmt.Fprintln(os.Stderr, "interop: lab.sh up:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "lab: phase %-22s %6.1f s\n", "lab ready", time.Since(t0).Seconds())
	t1 := time.Now()
	args := append([]string{"netns", "exec", l.Netns, os.Args[0]}, os.Args[1:]...)
	cmd := exec.Command("ip", args...)
	cmd.Env = append(os.Environ(), envInner+"=1")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err = cmd.Run()
	fmt.Fprintf(os.Stderr, "lab: phase %-22s %6.1f s\n", "tests in namespace", time.Since(t1).Seconds())
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode()
	case err != nil:
		fmt.Fprintln(os.Stderr, "interop: running the tests in the namespace:", err)
		return 1
	}
	return 0
}

// runLab runs a lab.sh subcommand, its messages going to stderr; it
// returns the exit code and lab.sh's last message.
func runLab(sub string) (int, string, error) {
	var out bytes.Buffer
	cmd := exec.Command("bash", labScript(), sub)
	cmd.Stdout = io.MultiWriter(os.Stderr, &out)
	cmd.Stderr = cmd.Stdout
	err := cmd.Run()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := strings.TrimPrefix(lines[len(lines)-1], "lab: ")
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), last, err
	}
	return 0, last, err
}

// lockLab keeps two test runs on one machine from sharing (and tearing
// down) the same namespace and guest: the second waits for the first.
func lockLab(wait time.Duration) (func(), error) {
	f, err := os.OpenFile("/run/isupgw-lab.lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			_ = f.Close()
			return nil, fmt.Errorf("lock /run/isupgw-lab.lock (another interop run?): %w", err)
		}
		time.Sleep(time.Second)
	}
}
