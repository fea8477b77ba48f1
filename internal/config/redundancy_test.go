package config

import (
	"strings"
	"testing"

	"github.com/isupgw/isupgw/mtp"
)

const pairYAML = `
point_code: 1
m3ua:
  role: asp
  transport: udp
  peers:
    - name: stp
      connect: 127.0.0.1:2905
      routing_contexts: [100]
      point_codes: [2]
circuit_groups:
  - name: b
    point_code: 2
    cics: ["1-31"]
state_file: /shared/isupgw/blocks.json
redundancy:
  mode: active-standby
`

// TestActiveStandbyConfig: the pair mode makes every peer a standby-capable
// override ASP; loadshare and a role other than asp are refused with the reason.
func TestActiveStandbyConfig(t *testing.T) {
	cfg, err := Parse("pair.yaml", []byte(pairYAML))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Gateway.M3UA.Peers[0]
	if !p.Standby || p.TrafficMode != mtp.Override {
		t.Fatalf("peer %+v: want standby, override", p)
	}
	for _, c := range []struct{ from, to, want string }{
		{"      point_codes: [2]\n", "      point_codes: [2]\n      traffic_mode: loadshare\n", "needs override"},
		{"  role: asp\n", "  role: ipsp\n", "needs m3ua.role asp"},
		{"  mode: active-standby\n", "  mode: hot\n", "want single or active-standby"},
	} {
		_, err := Parse("pair.yaml", []byte(strings.Replace(pairYAML, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.to, err, c.want)
		}
	}
	single, err := Parse("single.yaml", []byte(strings.Replace(pairYAML, "redundancy:\n  mode: active-standby\n", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if single.Gateway.M3UA.Peers[0].Standby {
		t.Fatal("a single gateway's peer is standby-capable")
	}
}
