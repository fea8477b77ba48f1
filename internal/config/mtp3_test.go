package config

import (
	"strings"
	"testing"

	"github.com/isupgw/isupgw/mtp/mtp3"
	"github.com/isupgw/isupgw/mtp/transport"
)

const withMTP3 = `
point_code: 1
variant: itu
m3ua:
  listen: 127.0.0.1:2905
mtp3:
  transport: udp
  linksets:
    - name: exchange-b
      adjacent: 2
      links:
        - slc: 0
          type: m2pa
          connect: 127.0.0.1:3565
        - slc: 1
          type: m2pa
          listen: 127.0.0.1:3566
    - name: lab
      adjacent: 5
      links:
        - type: mtp2-lab-socket
          listen_socket: /tmp/isupgw-lab.sock
  routes:
    - point_code: 3
      linkset: exchange-b
      priority: 1
circuit_groups:
  - name: b
    point_code: 2
    cics: ["1-31"]
  - name: c
    point_code: 3
    cics: ["1-31"]
  - name: lab
    point_code: 5
    cics: ["1-31"]
`

func TestMTP3SectionBuildsPlan(t *testing.T) {
	cfg, err := Parse("x.yaml", []byte(withMTP3))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.MTP3
	if p == nil || len(p.Node.Linksets) != 2 || len(p.Links) != 2 || len(p.Links[0]) != 2 || len(p.Links[1]) != 1 {
		t.Fatalf("plan %+v", p)
	}
	if p.Node.OPC != 1 || p.Node.NI != 2 || p.Node.Variant != mtp3.ITU || p.Node.Linksets[0].Adjacent != 2 {
		t.Fatalf("node %+v", p.Node)
	}
	a, b, lab := p.Links[0][0], p.Links[0][1], p.Links[1][0]
	if a.Type != LinkM2PA || a.SLC != 0 || a.M2PA.Dial.String() != "127.0.0.1:3565" || a.M2PA.Transport != transport.KindUDP {
		t.Fatalf("link 0 %+v", a)
	}
	if b.SLC != 1 || b.M2PA.Listen.String() != "127.0.0.1:3566" || b.M2PA.Dial.IsValid() {
		t.Fatalf("link 1 %+v", b)
	}
	if lab.Type != LinkMTP2 || lab.SLC != 0 || lab.MTP2.Path != "/tmp/isupgw-lab.sock" || !lab.MTP2.Listen {
		t.Fatalf("lab link %+v", lab)
	}
	if len(p.Node.Routes) != 1 || p.Node.Routes[0].DPC != 3 || p.Node.Routes[0].Linkset != "exchange-b" || p.Node.Routes[0].Priority != 1 {
		t.Fatalf("routes %+v", p.Node.Routes)
	}
	if len(cfg.Gateway.M3UA.Peers) != 0 {
		t.Fatal("no m3ua peers were configured")
	}
}

func TestMTP3SectionErrorsNameLineAndField(t *testing.T) {
	cases := []struct{ from, to, want string }{
		{"          type: m2pa\n          connect: 127.0.0.1:3565", "          type: m2pa", "x.yaml:12: mtp3.linksets[0].links[0]: an m2pa link needs exactly one of connect"},
		{"        - slc: 1", "        - slc: 0", "mtp3.linksets[0].links[1].slc: 0 is used by another link"},
		{"type: mtp2-lab-socket", "type: e1", `mtp3.linksets[1].links[0].type: "e1" (want m2pa or mtp2-lab-socket)`},
		{"      linkset: exchange-b", "      linkset: nowhere", `mtp3.routes[0].linkset: "nowhere" is not a linkset`},
		{"      adjacent: 5", "      adjacent: 1", "mtp3.linksets[1].adjacent: 1 is our own point code"},
		{"  - name: lab\n    point_code: 5", "  - name: lab\n    point_code: 9", "no m3ua peer routes point code 9"},
	}
	for _, c := range cases {
		y := strings.Replace(withMTP3, c.from, c.to, 1)
		if y == withMTP3 {
			t.Fatalf("case %q changed nothing", c.want)
		}
		_, err := Parse("x.yaml", []byte(y))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("error %v\nwant it to contain: %s", err, c.want)
		}
	}
}
