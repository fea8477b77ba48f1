package libss7

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/isupgw/isupgw/internal/lockedbuf"
)

// Header is where libss7-dev puts the library's header.
const Header = "/usr/include/libss7.h"

// requireEnv makes a missing gcc or libss7-dev a failure instead of a skip
// (CI sets it after installing both).
const requireEnv = "ISUPGW_LIBSS7"

// Source is the path of farend/farend.c beside this file. (Go refuses C
// files in a package directory without cgo, so the program has its own.)
func Source() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "farend", "farend.c")
}

var build struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

// Build compiles farend.c once per test binary and returns the binary's
// path. It skips the test when gcc or libss7-dev is missing (fails instead
// when ISUPGW_LIBSS7=1). The binary lives in a temporary directory that
// RemoveBuild deletes; call it from TestMain after m.Run.
func Build(t testing.TB) string {
	t.Helper()
	missing := func(what string) {
		msg := "libss7 interop: " + what + " (Debian packages gcc and libss7-dev; .ci/run installs them)"
		if os.Getenv(requireEnv) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		missing("gcc not installed")
	}
	if _, err := os.Stat(Header); err != nil {
		missing(Header + " not found")
	}
	build.once.Do(func() {
		if build.dir, build.err = os.MkdirTemp("", "farend-"); build.err != nil {
			return
		}
		build.bin = filepath.Join(build.dir, "farend")
		// -O0: a test tool, and it builds in a third of the time.
		cmd := exec.Command(gcc, "-O0", "-g", "-Wall", "-Wextra", "-Wno-unused-parameter", "-o", build.bin, Source(), "-lss7")
		build.out, build.err = cmd.CombinedOutput()
	})
	if build.err != nil {
		t.Fatalf("building farend: %v\n%s", build.err, build.out)
	}
	return build.bin
}

// RemoveBuild deletes the directory Build compiled farend into.
func RemoveBuild() {
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
}

// Config is farend's command line.
type Config struct {
	Variant string // "itu" or "ansi"
	OPC     string // farend's own point code (number, or a-b-c)
	DPC     string // the adjacent point code: isupgw's, or the other farend's
	CICs    string // "FIRST-LAST"
	// Mode is the mode and its arguments: {"answer"},
	// {"originate", "N", "RATE"} or {"script", "-"} (commands on stdin,
	// see Farend.Command) or {"script", FILE}.
	Mode []string
	// Args are further options (--called, --hold, --wire, --isup-timer ...).
	Args []string
}

func (c Config) args() []string {
	a := []string{"--variant", c.Variant, "--opc", c.OPC, "--dpc", c.DPC, "--fd", "3"}
	if c.CICs != "" {
		a = append(a, "--cics", c.CICs)
	}
	a = append(a, c.Args...)
	return append(a, c.Mode...)
}

// Farend is one running farend process.
type Farend struct {
	t      testing.TB
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	log    *Log
	stderr *lockedbuf.Buffer
	exited chan struct{}
	err    error // Wait's result, valid once exited is closed
	inMu   sync.Mutex
}

// Start runs farend with link as its fd 3 (the MTP2 socket) and closes the
// test's copy of link. The process is stopped at cleanup; on failure its
// stderr and last events are logged.
func Start(t testing.TB, bin string, cfg Config, link *os.File) *Farend {
	t.Helper()
	f := &Farend{
		t:      t,
		name:   fmt.Sprintf("farend[%s %s]", cfg.Variant, cfg.OPC),
		log:    newLog(),
		stderr: &lockedbuf.Buffer{},
		exited: make(chan struct{}),
	}
	f.cmd = exec.Command(bin, cfg.args()...)
	f.cmd.ExtraFiles = []*os.File{link}
	f.cmd.Stderr = f.stderr
	stdout, err := f.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Mode) == 2 && cfg.Mode[0] == "script" && cfg.Mode[1] == "-" {
		if f.stdin, err = f.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.cmd.Start(); err != nil {
		t.Fatalf("starting farend: %v", err)
	}
	link.Close()
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		f.read(stdout)
	}()
	go func() {
		<-readDone
		f.err = f.cmd.Wait()
		close(f.exited)
	}()
	t.Cleanup(func() {
		f.Stop()
		if t.Failed() {
			t.Logf("%s stderr:\n%s", f.name, f.stderr.String())
			t.Logf("%s last events:\n%s", f.name, f.log.tail(40))
		}
	})
	return f
}

func (f *Farend) read(r io.Reader) {
	defer f.log.close()
	verbose := os.Getenv("ISUPGW_FAREND_LOG") == "1"
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var e Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			e = Event{Dir: "raw", Msg: "RAW", CIC: -1, Text: line, Line: line}
		}
		if verbose {
			f.t.Logf("%s %s", f.name, line)
		}
		f.log.add(e)
	}
}

// Log is the process's event log.
func (f *Farend) Log() *Log { return f.log }

// Command sends one script line (script mode on stdin only).
func (f *Farend) Command(line string) error {
	f.inMu.Lock()
	defer f.inMu.Unlock()
	if f.stdin == nil {
		return errors.New("farend was not started with script -")
	}
	_, err := io.WriteString(f.stdin, line+"\n")
	return err
}

// CloseInput ends the script: farend exits after --linger.
func (f *Farend) CloseInput() {
	f.inMu.Lock()
	defer f.inMu.Unlock()
	if f.stdin != nil {
		f.stdin.Close()
		f.stdin = nil
	}
}

// Wait waits for the process to exit by itself, at most timeout.
func (f *Farend) Wait(timeout time.Duration) error {
	select {
	case <-f.exited:
		return f.err
	case <-time.After(timeout):
		return fmt.Errorf("%s still running after %v", f.name, timeout)
	}
}

// Exited reports whether the process has exited.
func (f *Farend) Exited() bool {
	select {
	case <-f.exited:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM, and SIGKILL if the process has not exited within
// 5 s. It returns the process's exit error (nil for a clean exit).
func (f *Farend) Stop() error {
	f.CloseInput()
	if f.Exited() {
		return f.err
	}
	_ = f.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-f.exited:
	case <-time.After(5 * time.Second):
		_ = f.cmd.Process.Kill()
		<-f.exited
	}
	return f.err
}

// SocketPair returns the two ends of a fresh AF_UNIX SOCK_SEQPACKET
// socketpair, the transport farend's MTP2 expects (one datagram per signal
// unit). Both are closed at cleanup if still open.
func SocketPair(t testing.TB) (a, b *os.File) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socketpair: %v", err)
	}
	a = os.NewFile(uintptr(fds[0]), "mtp2-a")
	b = os.NewFile(uintptr(fds[1]), "mtp2-b")
	t.Cleanup(func() {
		a.Close()
		b.Close()
	})
	return a, b
}

// StartPeer starts farend on one end of a new socketpair and returns the
// process and the other end, to be handed to isupgw as its MTP2 link. The
// file is closed at cleanup.
func StartPeer(t testing.TB, bin string, cfg Config) (*Farend, *os.File) {
	t.Helper()
	ours, theirs := SocketPair(t)
	f := Start(t, bin, cfg, theirs)
	return f, ours
}

// StartPeerConn is StartPeer with the link end as a net.Conn (a
// *net.UnixConn of network "unixpacket": each Read and Write is one
// signal unit). The conn is closed at cleanup.
func StartPeerConn(t testing.TB, bin string, cfg Config) (*Farend, net.Conn) {
	t.Helper()
	f, file := StartPeer(t, bin, cfg)
	conn, err := net.FileConn(file)
	if err != nil {
		t.Fatalf("net.FileConn: %v", err)
	}
	file.Close() // FileConn holds its own copy
	t.Cleanup(func() { conn.Close() })
	return f, conn
}
