package config

import (
	"crypto/rand"
	"encoding/hex"
	"net/netip"

	"go.yaml.in/yaml/v3"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/mtp/transport"
	"github.com/isupgw/isupgw/sprc"
)

// Variant is itu or ansi.
type Variant struct {
	v   isup.Variant
	set bool
}

func (x *Variant) UnmarshalYAML(n *yaml.Node) error {
	x.set = true
	return enum(n, "variant", map[string]isup.Variant{"itu": isup.ITU, "ansi": isup.ANSI}, &x.v)
}

// NI is the network indicator.
type NI struct {
	v   uint8
	set bool
}

func (x *NI) UnmarshalYAML(n *yaml.Node) error {
	x.set = true
	return enum(n, "network indicator", map[string]uint8{"international": 0, "spare": 1, "national": 2, "reserved": 3,
		"0": 0, "1": 1, "2": 2, "3": 3}, &x.v)
}

// Role is the M3UA role.
type Role struct {
	v   m3ua.Role
	set bool
}

func (x *Role) UnmarshalYAML(n *yaml.Node) error {
	x.set = true
	return enum(n, "m3ua role", map[string]m3ua.Role{"asp": m3ua.RoleASP, "sg": m3ua.RoleSG, "ipsp": m3ua.RoleIPSP}, &x.v)
}

// Transport is the SCTP implementation.
type Transport struct{ v transport.Kind }

func (x *Transport) UnmarshalYAML(n *yaml.Node) error {
	return enum(n, "transport", map[string]transport.Kind{"auto": transport.KindAuto, "kernel": transport.KindKernel,
		"udp": transport.KindUDP, "raw": transport.KindRaw}, &x.v)
}

// TrafficMode is override or loadshare.
type TrafficMode struct {
	v   mtp.Mode
	set bool
}

func (x *TrafficMode) UnmarshalYAML(n *yaml.Node) error {
	x.set = true
	return enum(n, "traffic mode", map[string]mtp.Mode{"override": mtp.Override, "loadshare": mtp.Loadshare}, &x.v)
}

// Direction is who may seize a group's circuits.
type Direction struct{ v stack.Direction }

func (x *Direction) UnmarshalYAML(n *yaml.Node) error {
	return enum(n, "direction", map[string]stack.Direction{"both": stack.BothWay, "incoming": stack.IncomingOnly, "outgoing": stack.OutgoingOnly}, &x.v)
}

// Glare is the dual-seizure rule.
type Glare struct{ v stack.Glare }

func (x *Glare) UnmarshalYAML(n *yaml.Node) error {
	return enum(n, "glare rule", map[string]stack.Glare{"itu": stack.GlareITU, "odd": stack.GlareOdd, "even": stack.GlareEven,
		"all": stack.GlareAll, "none": stack.GlareNone}, &x.v)
}

// ACCMode is what a received ACL does.
type ACCMode struct{ v sprc.ACCMode }

func (x *ACCMode) UnmarshalYAML(n *yaml.Node) error {
	return enum(n, "ACC mode", map[string]sprc.ACCMode{"auto": sprc.ACCAuto, "report": sprc.ACCReport, "off": sprc.ACCOff}, &x.v)
}

// Level1Policy is what outbound level 1 does to new outgoing calls.
type Level1Policy struct{ v sprc.Level1Policy }

func (x *Level1Policy) UnmarshalYAML(n *yaml.Node) error {
	return enum(n, "level 1 outseize policy", map[string]sprc.Level1Policy{"refuse": sprc.Level1RefuseAll, "throttle": sprc.Level1Throttle}, &x.v)
}

func netipAddrPort(a AddrPort) netip.AddrPort { return netip.AddrPort(a) }
func netipAddr(a Addr) netip.Addr             { return netip.Addr(a) }

// randomToken makes a host API token for a run without a configured one.
func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
