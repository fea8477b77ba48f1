// Package apptest runs `isupgw run` inside a test process: several gateways
// over M3UA on loopback, each with its own context so that a test can stop
// one of them mid-run. Used by the tests of loadgen and host/client.
package apptest

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/isupgw/isupgw/internal/app"
)

// Gateway is a gateway running in the test process.
type Gateway struct {
	*app.Running
	cancel context.CancelFunc
	done   chan error
}

// Start runs a gateway with this configuration until ctx ends, Stop is
// called or the test ends.
func Start(t testing.TB, ctx context.Context, yaml string) *Gateway {
	t.Helper()
	path := filepath.Join(t.TempDir(), "isupgw.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	g := &Gateway{cancel: cancel, done: make(chan error, 1)}
	ready := make(chan *app.Running, 1)
	go func() {
		g.done <- app.Run(ctx, app.Options{ConfigPath: path, LogOut: io.Discard, Signals: make(chan os.Signal), DrainTimeout: 300 * time.Millisecond,
			Ready: func(r *app.Running) { ready <- r }})
		close(g.done)
	}()
	select {
	case g.Running = <-ready:
		t.Cleanup(g.Stop)
		return g
	case err := <-g.done:
		cancel()
		t.Fatalf("gateway did not start: %v", err)
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("gateway did not start within 10 s")
	}
	return nil
}

// Stop ends the gateway at once (its host connections close) and waits for it.
func (g *Gateway) Stop() {
	g.cancel()
	<-g.done
}

// HostAddr is the gateway's host API address.
func (g *Gateway) HostAddr() string { return g.Host.TCPAddr().String() }

// FreeUDPPort finds a UDP port for an SCTP-over-UDP listener.
func FreeUDPPort(t testing.TB) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}
