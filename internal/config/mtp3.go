package config

import (
	"fmt"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/m2pa"
	"github.com/isupgw/isupgw/mtp/mtp2"
	"github.com/isupgw/isupgw/mtp/mtp3"
	"github.com/isupgw/isupgw/mtp/transport"
)

// MTP3 is the gateway's own MTP3 signalling point on signalling links, beside
// (or instead of) M3UA: the destinations its linksets and routes reach go
// through it.
type MTP3 struct {
	// Transport carries the M2PA links' SCTP (auto, kernel, udp, raw). Over
	// udp the addresses given are both the UDP and the SCTP ports.
	Transport Transport `yaml:"transport"`
	SLSBits   int       `yaml:"sls_bits"` // ANSI: 5 (default) or 8
	// EmergencyAlignment proves links with the short emergency period
	// (Q.703 §7.3; 0.5 s instead of 8.2 s).
	EmergencyAlignment bool          `yaml:"emergency_alignment"`
	Linksets           []MTP3Linkset `yaml:"linksets"`
	Routes             []MTP3Route   `yaml:"routes"`
}

// MTP3Linkset is the links to one adjacent signalling point.
type MTP3Linkset struct {
	Name     string     `yaml:"name"`
	Adjacent PointCode  `yaml:"adjacent"`
	Links    []MTP3Link `yaml:"links"`
}

// MTP3Link is one signalling link: M2PA over SCTP (type m2pa, with connect
// or listen), or MTP2 signal units on a local socket (type mtp2-lab-socket,
// with connect_socket or listen_socket): a lab link to a process such as
// libss7 on the same machine, not a production E1.
type MTP3Link struct {
	SLC           *int      `yaml:"slc"`
	Type          string    `yaml:"type"`
	Connect       *AddrPort `yaml:"connect"`
	Listen        *AddrPort `yaml:"listen"`
	ConnectSocket string    `yaml:"connect_socket"`
	ListenSocket  string    `yaml:"listen_socket"`
}

// MTP3Route sends a destination over a linkset.
type MTP3Route struct {
	PointCode PointCode `yaml:"point_code"`
	Linkset   string    `yaml:"linkset"`
	Priority  int       `yaml:"priority"`
}

// Link types.
const (
	LinkM2PA = "m2pa"
	LinkMTP2 = "mtp2-lab-socket"
)

// MTP3Plan is what the application builds: the node's configuration (its
// links left nil) and, per linkset, the links to make.
type MTP3Plan struct {
	Node      mtp3.Config
	Links     [][]MTP3LinkPlan
	Emergency bool // emergency alignment on every link
}

// MTP3LinkPlan is one link to make: M2PA or MTP2 lab socket.
type MTP3LinkPlan struct {
	Name string
	SLC  uint8
	Type string
	M2PA m2pa.Config
	MTP2 mtp2.Config
}

// mtp3Plan checks the mtp3 section; nil when there is none.
func (v *validator) mtp3Plan(f *File, own mtp.PointCode, ni uint8, ansi bool) *MTP3Plan {
	c := f.MTP3
	if len(c.Linksets) == 0 {
		if len(c.Routes) > 0 {
			v.fail("mtp3.routes", "routes without linksets (want mtp3.linksets)")
		}
		return nil
	}
	// The gateway serves ISUP: other user parts are answered with UPU.
	p := &MTP3Plan{Node: mtp3.Config{OPC: own, NI: ni, UserParts: []uint8{mtp.SIISUP}}, Emergency: c.EmergencyAlignment}
	if ansi {
		p.Node.Variant = mtp3.ANSI
	}
	switch c.SLSBits {
	case 0, 5:
	case 8:
		p.Node.SLS8 = true
	default:
		v.fail("mtp3.sls_bits", "%d (want 5 or 8)", c.SLSBits)
	}
	if c.SLSBits != 0 && !ansi {
		v.fail("mtp3.sls_bits", "ITU's SLS has 4 bits: sls_bits is for ANSI")
	}
	kind, _ := transport.Resolve(c.Transport.v)
	names := map[string]bool{}
	for i, ls := range c.Linksets {
		path := fmt.Sprintf("mtp3.linksets[%d]", i)
		if ls.Name == "" {
			v.fail(path, "missing name")
		} else if names[ls.Name] {
			v.fail(path+".name", "%q is used by another linkset", ls.Name)
		}
		names[ls.Name] = true
		adj := v.pointCode(path+".adjacent", ls.Adjacent, ansi, true)
		if adj != 0 && adj == own {
			v.fail(path+".adjacent", "%d is our own point code", adj)
		}
		if len(ls.Links) == 0 || len(ls.Links) > 16 {
			v.fail(path+".links", "%d links (want 1 to 16)", len(ls.Links))
		}
		p.Node.Linksets = append(p.Node.Linksets, mtp3.LinksetConfig{Name: ls.Name, Adjacent: adj})
		var links []MTP3LinkPlan
		slcs := map[int]bool{}
		for j, l := range ls.Links {
			lp := fmt.Sprintf("%s.links[%d]", path, j)
			slc := j
			if l.SLC != nil {
				slc = *l.SLC
			}
			if slc < 0 || slc > 15 {
				v.fail(lp+".slc", "%d (want 0 to 15)", slc)
			} else if slcs[slc] {
				v.fail(lp+".slc", "%d is used by another link of the linkset", slc)
			}
			slcs[slc] = true
			plan := MTP3LinkPlan{Name: fmt.Sprintf("%s/%d", ls.Name, slc), SLC: uint8(slc), Type: l.Type}
			switch l.Type {
			case LinkM2PA:
				if (l.Connect == nil) == (l.Listen == nil) {
					v.fail(lp, "an m2pa link needs exactly one of connect (we dial) and listen (it dials us)")
				}
				if l.ConnectSocket != "" || l.ListenSocket != "" {
					v.fail(lp, "connect_socket and listen_socket are for mtp2-lab-socket links")
				}
				plan.M2PA = m2pa.Config{Name: plan.Name, Transport: kind}
				if l.Connect != nil {
					plan.M2PA.Dial = netipAddrPort(*l.Connect)
				}
				if l.Listen != nil {
					plan.M2PA.Listen = netipAddrPort(*l.Listen)
				}
			case LinkMTP2:
				if (l.ConnectSocket == "") == (l.ListenSocket == "") {
					v.fail(lp, "an mtp2-lab-socket link needs exactly one of connect_socket and listen_socket (a path)")
				}
				if l.Connect != nil || l.Listen != nil {
					v.fail(lp, "connect and listen are for m2pa links (want connect_socket or listen_socket)")
				}
				plan.MTP2 = mtp2.Config{Name: plan.Name, Path: l.ConnectSocket}
				if l.ListenSocket != "" {
					plan.MTP2.Path, plan.MTP2.Listen = l.ListenSocket, true
				}
			case "":
				v.fail(lp+".type", "missing (want m2pa or mtp2-lab-socket)")
			default:
				v.fail(lp+".type", "%q (want m2pa or mtp2-lab-socket)", l.Type)
			}
			links = append(links, plan)
		}
		p.Links = append(p.Links, links)
	}
	for i, r := range c.Routes {
		path := fmt.Sprintf("mtp3.routes[%d]", i)
		dpc := v.pointCode(path+".point_code", r.PointCode, ansi, true)
		if !names[r.Linkset] {
			v.fail(path+".linkset", "%q is not a linkset", r.Linkset)
		}
		p.Node.Routes = append(p.Node.Routes, mtp3.Route{DPC: dpc, Linkset: r.Linkset, Priority: r.Priority})
	}
	return p
}

// routes reports whether the plan reaches dpc.
func (p *MTP3Plan) routes(dpc mtp.PointCode) bool {
	if p == nil {
		return false
	}
	for _, ls := range p.Node.Linksets {
		if ls.Adjacent == dpc {
			return true
		}
	}
	for _, r := range p.Node.Routes {
		if r.DPC == dpc {
			return true
		}
	}
	return false
}
