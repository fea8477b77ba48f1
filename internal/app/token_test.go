package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/internal/lockedbuf"
)

// A token generated for the run is written to a file of mode 0600 that the
// log names, never to the log; hosts that read it get in, and the file goes
// when the gateway stops. Both with the default place and a configured one.
func TestGeneratedTokenNotLogged(t *testing.T) {
	const y = `point_code: 1
m3ua: {transport: udp, listen: 127.0.0.1:2905, udp_port: %d, peers: [{name: b, accept_from: 127.0.0.1, point_codes: [2]}]}
circuit_groups: [{name: b, point_code: 2, cics: ["1-8"]}]
host_api: {tcp: "127.0.0.1:0"%s}
metrics: 127.0.0.1:0
`
	configured := filepath.Join(t.TempDir(), "token")
	for _, tc := range []struct{ name, extra, want string }{
		{"default place", "", ""},
		{"configured", ", generated_token_file: " + configured, configured},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runtimeDir := t.TempDir()
			t.Setenv("XDG_RUNTIME_DIR", runtimeDir)
			path := filepath.Join(t.TempDir(), "isupgw.yaml")
			if err := os.WriteFile(path, []byte(fmt.Sprintf(y, freeUDPPort(t), tc.extra)), 0o644); err != nil {
				t.Fatal(err)
			}
			var logs lockedbuf.Buffer
			ready, errc, sigs := make(chan *Running, 1), make(chan error, 1), make(chan os.Signal, 1)
			go func() {
				errc <- Run(context.Background(), Options{ConfigPath: path, LogOut: &logs, Signals: sigs, DrainTimeout: 100 * time.Millisecond,
					Ready: func(r *Running) { ready <- r }})
			}()
			var run *Running
			select {
			case run = <-ready:
			case err := <-errc:
				t.Fatalf("gateway did not start: %v", err)
			case <-time.After(10 * time.Second):
				t.Fatal("gateway did not start within 10 s")
			}
			token := run.Config.Host.Token
			var file string
			for _, line := range strings.Split(logs.String(), "\n") {
				var rec map[string]any
				if json.Unmarshal([]byte(line), &rec) == nil && rec["token_file"] != nil {
					file, _ = rec["token_file"].(string)
				}
			}
			if file == "" {
				t.Fatalf("no log line names the token file:\n%s", logs.String())
			}
			if tc.want != "" && file != tc.want {
				t.Errorf("token file %s, want the configured %s", file, tc.want)
			}
			if tc.want == "" && !strings.HasPrefix(file, runtimeDir+string(os.PathSeparator)) {
				t.Errorf("token file %s, want it under XDG_RUNTIME_DIR %s", file, runtimeDir)
			}
			fi, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
			}
			b, err := os.ReadFile(file)
			if err != nil || strings.TrimSpace(string(b)) != token || len(token) < 16 {
				t.Fatalf("token file holds %q (%v), want the token", b, err)
			}
			c, err := client.Dial(context.Background(), "tcp", run.Host.TCPAddr().String(), client.Config{App: "reader", Token: strings.TrimSpace(string(b))})
			if err != nil {
				t.Fatalf("hello with the token from the file: %v", err)
			}
			c.Close()
			sigs <- syscall.SIGTERM
			if err := <-errc; err != nil {
				t.Fatalf("run: %v", err)
			}
			if strings.Contains(logs.String(), token) {
				t.Errorf("the token is in the log")
			}
			if _, err := os.Stat(file); !os.IsNotExist(err) {
				t.Errorf("token file left after stop: %v", err)
			}
		})
	}
}

// A gateway that only dials its peer says in its "isupgw running" line that
// M3UA listens nowhere, not "invalid AddrPort".
func TestRunningLineOfADiallerNamesNoListener(t *testing.T) {
	const y = `point_code: 2
m3ua: {transport: udp, udp_port: %d, peers: [{name: a, connect: 127.0.0.1:2905, point_codes: [1]}]}
circuit_groups: [{name: a, point_code: 1, cics: ["1-8"]}]
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
`
	path := filepath.Join(t.TempDir(), "isupgw.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(y, freeUDPPort(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs lockedbuf.Buffer
	ready, errc, sigs := make(chan *Running, 1), make(chan error, 1), make(chan os.Signal, 1)
	go func() {
		errc <- Run(context.Background(), Options{ConfigPath: path, LogOut: &logs, Signals: sigs, DrainTimeout: 100 * time.Millisecond,
			Ready: func(r *Running) { ready <- r }})
	}()
	select {
	case <-ready:
	case err := <-errc:
		t.Fatalf("gateway did not start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("gateway did not start within 10 s")
	}
	sigs <- syscall.SIGTERM
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}
	var m3 any
	for _, line := range strings.Split(logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["message"] == "isupgw running" {
			m3 = rec["m3ua"]
		}
	}
	if m3 != "none" {
		t.Errorf(`"isupgw running" logs m3ua %v, want "none"`, m3)
	}
}
