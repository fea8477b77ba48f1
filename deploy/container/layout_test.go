// Package container tests the container image's build stage and runtime
// layout without a container engine: build.sh (what the Dockerfile runs)
// builds the binary and lays out the root file system, and the binary then
// runs from that tree as the image's unprivileged user.
package container

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/isupgw/isupgw/internal/lockedbuf"
)

const uid = 65532 // the image's user (Dockerfile USER, layout.sh)

func TestRuntimeLayoutAsUnprivilegedUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the layout gives directories to uid 65532 and the gateway runs as that user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) missing: cannot run the binary as the unprivileged user")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go missing: cannot run build.sh")
	}
	work, err := os.MkdirTemp("", "isupgw-layout-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	if err := os.Chmod(work, 0o755); err != nil { // the user must reach the tree
		t.Fatal(err)
	}

	// The build stage, as the Dockerfile runs it.
	build := exec.Command("sh", "deploy/container/build.sh", work)
	build.Dir = filepath.Join("..", "..")
	build.Env = append(os.Environ(), "VERSION=v0.0.0-layout", "COMMIT=layouttest")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build.sh: %v\n%s", err, out)
	}
	root := filepath.Join(work, "rootfs")
	bin := filepath.Join(root, "usr/local/bin/isupgw")
	if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.HasPrefix(string(out), "isupgw v0.0.0-layout\ncommit layouttest\n") {
		t.Errorf("the built binary's version: %v\n%s", err, out)
	}
	for _, d := range []string{"run/isupgw", "var/lib/isupgw"} {
		st, err := os.Stat(filepath.Join(root, d))
		if err != nil {
			t.Fatal(err)
		}
		if sys := st.Sys().(*syscall.Stat_t); sys.Uid != uid || sys.Gid != uid || st.Mode().Perm() != 0o750 {
			t.Errorf("/%s: owner %d:%d mode %v, want %d:%d 0750", d, sys.Uid, sys.Gid, st.Mode().Perm(), uid, uid)
		}
	}

	// The reference configuration, as the image ships it, moved into the tree
	// and onto free loopback ports: this test sends nothing beyond the machine.
	ref, err := os.ReadFile(filepath.Join(root, "etc/isupgw/isupgw.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	metrics := freePort(t, "tcp")
	cfg := strings.NewReplacer(
		"/etc/isupgw/", root+"/etc/isupgw/",
		"/run/isupgw/", root+"/run/isupgw/",
		"/var/lib/isupgw", root+"/var/lib/isupgw",
		"udp_port: 9899", fmt.Sprintf("udp_port: %d", freePort(t, "udp")),
		"transport: auto ", "transport: udp  ",
		"connect: 192.0.2.10:2905", "accept_from: 127.0.0.2",
		"accept_from: 192.0.2.20", "accept_from: 127.0.0.3",
		"tcp: 127.0.0.1:7700", fmt.Sprintf("tcp: 127.0.0.1:%d", freePort(t, "tcp")),
		"metrics: 127.0.0.1:9700", fmt.Sprintf("metrics: 127.0.0.1:%d", metrics),
	).Replace(string(ref))
	for _, line := range strings.Split(cfg, "\n") {
		value, _, _ := strings.Cut(line, "#")
		if strings.Contains(value, "192.0.2.") || strings.Contains(value, "0.0.0.0") {
			t.Fatalf("the reference configuration changed: %q is not on loopback", line)
		}
	}
	cfgPath := filepath.Join(root, "etc/isupgw/isupgw.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", metrics)
	gateway := func(env ...string) *exec.Cmd {
		c := exec.Command(setpriv, fmt.Sprintf("--reuid=%d", uid), fmt.Sprintf("--regid=%d", uid), "--clear-groups",
			bin, "run", "--config", cfgPath, "--log-format", "console")
		c.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
		return c
	}

	// 1. The token from a mounted file readable by the user.
	token := filepath.Join(root, "etc/isupgw/token")
	if err := os.WriteFile(token, []byte("s3cret\n"), 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(token, uid, uid); err != nil {
		t.Fatal(err)
	}
	runAndStop(t, gateway(), bin, metricsAddr, filepath.Join(root, "run/isupgw/host.sock"))

	// 2. No token file: the token from the environment.
	if err := os.Remove(token); err != nil {
		t.Fatal(err)
	}
	runAndStop(t, gateway("ISUPGW_TOKEN=s3cret"), bin, metricsAddr, filepath.Join(root, "run/isupgw/host.sock"))

	// 3. The layout matters: a runtime directory owned by root stops the
	// start-up with an error that names the socket.
	if err := os.Chown(filepath.Join(root, "run/isupgw"), 0, 0); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	g := gateway("ISUPGW_TOKEN=s3cret")
	g.Stderr = &stderr
	err = runBounded(g, 30*time.Second)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), root+"/run/isupgw/host.sock") ||
		!strings.Contains(stderr.String(), "permission denied") {
		t.Errorf("with /run/isupgw owned by root: %v, want exit 1 naming the socket:\n%s", err, stderr.String())
	}
}

// runAndStop starts the gateway, waits for `isupgw status` to succeed,
// checks it runs as the user with its socket in the runtime directory, and
// stops it with SIGTERM (exit 0).
func runAndStop(t *testing.T, g *exec.Cmd, bin, metricsAddr, sock string) {
	t.Helper()
	var logs lockedbuf.Buffer // the gateway writes while a failure reads it
	g.Stdout, g.Stderr = &logs, &logs
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- g.Wait() }()
	stop := func() {
		_ = g.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("gateway stopped with %v:\n%s", err, logs.String())
			}
		case <-time.After(30 * time.Second):
			_ = g.Process.Kill()
			t.Errorf("gateway did not stop within 30 s of SIGTERM")
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := exec.Command(bin, "status", "--addr", metricsAddr).CombinedOutput()
		// Serving: the status answered. The reference configuration's peers
		// are not here, so status also says (exit 1) which are not up.
		if strings.Contains(string(out), "point code") && (err == nil || strings.Contains(string(out), "not up:")) {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("gateway exited (%v) before serving:\n%s", err, logs.String())
		case <-time.After(100 * time.Millisecond): // polling a start-up, bounded by the deadline
		}
		if time.Now().After(deadline) {
			_ = g.Process.Kill()
			t.Fatalf("isupgw status did not succeed within 30 s: %v %s\n%s", err, out, logs.String())
		}
	}
	defer stop()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", g.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(status), fmt.Sprintf("\nUid:\t%d\t%d\t%d\t%d\n", uid, uid, uid, uid)) {
		t.Errorf("the gateway does not run as uid %d:\n%s", uid, status)
	}
	st, err := os.Stat(sock)
	if err != nil {
		t.Fatalf("host API socket: %v\n%s", err, logs.String())
	}
	if sys := st.Sys().(*syscall.Stat_t); st.Mode()&os.ModeSocket == 0 || sys.Uid != uid {
		t.Errorf("%s: mode %v owner %d, want a socket of uid %d", sock, st.Mode(), sys.Uid, uid)
	}
}

func runBounded(c *exec.Cmd, limit time.Duration) error {
	if err := c.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		_ = c.Process.Kill()
		<-done
		return fmt.Errorf("still running after %v", limit)
	}
}

func freePort(t *testing.T, network string) int {
	t.Helper()
	if network == "udp" {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).Port
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
