package replay

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp/capture"
)

// step is one ISUP message of a synthetic exchange between point codes 1 and 2.
type step struct {
	from uint32 // 1 or 2; the message goes to the other
	msg  isup.Message
}

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

func iam(cic uint16, called string) *isup.InitialAddress {
	cd, err := isup.NewCalledPartyNumber(isup.NAINational, isup.NPIISDN, called)
	if err != nil {
		panic(err)
	}
	return &isup.InitialAddress{Circuit: isup.Circuit{CIC: cic}, NatureOfConnection: isup.NewNatureOfConnection(0, 0, false),
		ForwardCall: isup.NewForwardCallIndicators(true, 0, true), CallingPartyCategory: 10, TransmissionMedium: 3, CalledParty: cd,
		UserServiceInfo: isup.NewUserServiceInformation(0, 2)} // the ITU layout ignores it, ANSI needs it
}

func simple(k isup.MessageType, cic uint16) *isup.Simple {
	return &isup.Simple{Circuit: isup.Circuit{CIC: cic}, Kind: k}
}

func rel(cic uint16, cause uint8) *isup.Release {
	return &isup.Release{Circuit: isup.Circuit{CIC: cic}, Cause: isup.NewCause(isup.LocationPublicLocal, cause)}
}

func rlc(cic uint16) *isup.ReleaseComplete {
	return &isup.ReleaseComplete{Circuit: isup.Circuit{CIC: cic}}
}

func acm(cic uint16) *isup.AddressComplete {
	return &isup.AddressComplete{Circuit: isup.Circuit{CIC: cic}, BackwardCall: isup.NewBackwardCallIndicators(2, 1, 1, true)}
}

func anm(cic uint16) *isup.Answer { return &isup.Answer{Circuit: isup.Circuit{CIC: cic}} }

func cpg(cic uint16) *isup.CallProgress {
	return &isup.CallProgress{Circuit: isup.Circuit{CIC: cic}, Event: isup.NewEventInformation(isup.EventAlerting, false)}
}

func sus(k isup.MessageType, cic uint16) *isup.SuspendResume {
	return &isup.SuspendResume{Circuit: isup.Circuit{CIC: cic}, Kind: k}
}

func grs(k isup.MessageType, cic uint16, rng uint8) *isup.GroupReset {
	r := isup.RangeAndStatus{Range: rng}
	if k == isup.GRA {
		r = isup.NewRangeAndStatus(rng, true)
	}
	return &isup.GroupReset{Circuit: isup.Circuit{CIC: cic}, Kind: k, RangeAndStatus: r}
}

func cgb(k isup.MessageType, cic uint16, rng uint8, cics ...int) *isup.GroupSupervision {
	r := isup.NewRangeAndStatus(rng, true)
	for _, i := range cics {
		r.SetBit(i, true)
	}
	return &isup.GroupSupervision{Circuit: isup.Circuit{CIC: cic}, Kind: k, Type: isup.MaintenanceOriented, RangeAndStatus: r}
}

// callSteps is a whole call on one CIC: IAM, ACM, CPG, ANM, REL, RLC.
func callSteps(cic uint16) []step {
	return []step{{1, iam(cic, "4930123456")}, {2, acm(cic)}, {2, cpg(cic)}, {2, anm(cic)}, {1, rel(cic, isup.CauseNormalClearing)}, {2, rlc(cic)}}
}

// richTraffic exercises every procedure the checker knows, with no violation.
func richTraffic() []step {
	s := []step{
		{1, grs(isup.GRS, 1, 7)}, {2, grs(isup.GRA, 1, 7)},
	}
	s = append(s, callSteps(1)...)
	s = append(s,
		step{2, iam(2, "301")}, step{1, acm(2)}, step{1, anm(2)}, step{1, sus(isup.SUS, 2)}, step{1, sus(isup.RES, 2)},
		step{2, rel(2, isup.CauseNormalClearing)}, step{1, rlc(2)},
		step{1, iam(3, "302")}, step{2, &isup.Confusion{Circuit: isup.Circuit{CIC: 3}, Cause: isup.NewCause(4, isup.CauseParameterNonExistent)}},
		step{2, rel(3, isup.CauseUserBusy)}, step{1, rlc(3)},
		step{1, simple(isup.BLO, 4)}, step{2, simple(isup.BLA, 4)}, step{1, simple(isup.UBL, 4)}, step{2, simple(isup.UBA, 4)},
		step{2, cgb(isup.CGB, 5, 2, 0, 2)}, step{1, cgb(isup.CGBA, 5, 2, 0, 2)},
		step{2, cgb(isup.CGU, 5, 2, 0, 2)}, step{1, cgb(isup.CGUA, 5, 2, 0, 2)},
		step{1, &isup.CircuitQuery{Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.RangeAndStatus{Range: 3}}},
		step{2, &isup.CircuitQueryResponse{Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.RangeAndStatus{Range: 3}, States: []byte{0x0c, 0x0c, 0x0c, 0x0c}}},
		step{1, simple(isup.RSC, 6)}, step{2, rlc(6)},
		step{1, iam(9, "303")}, step{2, simple(isup.UCIC, 9)},
		step{1, iam(7, "304")}, step{2, &isup.Connect{Circuit: isup.Circuit{CIC: 7}}}, step{2, rel(7, isup.CauseNormalClearing)}, step{1, rlc(7)},
	)
	return s
}

// ansiTraffic is what an ANSI capture holds in the tests: two calls, a
// blocking and a group reset.
func ansiTraffic() []step {
	s := []step{{1, grs(isup.GRS, 1, 3)}, {2, grs(isup.GRA, 1, 3)}}
	s = append(s, callSteps(1)...)
	s = append(s, callSteps(2)...)
	return append(s, step{2, simple(isup.BLO, 3)}, step{1, simple(isup.BLA, 3)})
}

// encode turns steps into Msgs as Load would return them (frames from 1,
// 10 ms apart).
func encode(t testing.TB, steps []step, v isup.Variant) []Msg {
	t.Helper()
	var out []Msg
	for i, s := range steps {
		b, err := isup.Marshal(s.msg, v)
		if err != nil {
			t.Fatalf("step %d %s: %v", i, s.msg.MessageType(), err)
		}
		m := capture.Message{Frame: i + 1, Time: t0.Add(time.Duration(i) * 10 * time.Millisecond), HasLabel: true,
			OPC: s.from, DPC: 3 - s.from, SI: 5, NI: 2, SLS: uint8(s.msg.CircuitID() & 0x0f), Payload: b}
		out = append(out, decodeMsg(i, &m, v))
		if out[i].Err != nil {
			t.Fatalf("step %d: %v", i, out[i].Err)
		}
	}
	return out
}

func synthCall(t testing.TB, cics []uint16) []Msg {
	var s []step
	for _, c := range cics {
		s = append(s, callSteps(c)...)
	}
	return encode(t, s, isup.ITU)
}

// linkCase is one way of writing a capture.
type linkCase struct {
	name  string
	link  capture.LinkType
	udp   bool
	v6    bool
	draft bool // M3UA draft 6 framing (Protocol Data 1 holds the MSU)
	ansi  bool
}

var linkCases = []linkCase{
	{name: "ethernet-ipv4", link: capture.LinkEthernet},
	{name: "ethernet-ipv6", link: capture.LinkEthernet, v6: true},
	{name: "sctp-over-udp", link: capture.LinkEthernet, udp: true},
	{name: "sll", link: capture.LinkSLL},
	{name: "sll2-ipv6-udp", link: capture.LinkSLL2, v6: true, udp: true},
	{name: "null", link: capture.LinkNull},
	{name: "loop", link: capture.LinkLoop},
	{name: "raw-ip", link: capture.LinkRaw},
	{name: "m3ua-draft", link: capture.LinkEthernet, draft: true},
	{name: "mtp2", link: capture.LinkMTP2},
	{name: "mtp2-phdr", link: capture.LinkMTP2WithPHDR},
	{name: "mtp3", link: capture.LinkMTP3},
	{name: "mtp3-ansi", link: capture.LinkMTP3, ansi: true},
}

// writeCapture writes msgs (labels and payloads as they are) in the link
// type of lc, as the project's capture.Writer produces it.
func writeCapture(t testing.TB, lc linkCase, msgs []Msg) []byte {
	t.Helper()
	var buf bytes.Buffer
	opts := []capture.Option{capture.WithLinkType(lc.link), capture.WithANSI(lc.ansi)}
	if lc.udp {
		opts = append(opts, capture.WithSCTPOverUDP(capture.DefaultSCTPOverUDPPort))
	}
	w, err := capture.NewWriter(&buf, opts...)
	if err != nil {
		t.Fatal(err)
	}
	addr := func(pc uint32) netip.AddrPort {
		if lc.v6 {
			return netip.AddrPortFrom(netip.MustParseAddr("2001:db8::"+string(rune('0'+pc))), 2905)
		}
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(pc)}), 2905)
	}
	for _, m := range msgs {
		sio := m.NI<<6 | 5
		switch {
		case lc.link == capture.LinkMTP2 || lc.link == capture.LinkMTP2WithPHDR || lc.link == capture.LinkMTP3:
			err = w.WriteMSU(m.Time, sio, capture.Label{OPC: m.OPC, DPC: m.DPC, SLS: m.SLS}, m.Raw)
		case lc.draft:
			err = w.WriteM3UA(m.Time, addr(m.OPC), addr(m.DPC), 1+uint16(m.SLS), draftData(m))
		default:
			err = w.WriteM3UA(m.Time, addr(m.OPC), addr(m.DPC), 1+uint16(m.SLS), capture.DataMessage(m.OPC, m.DPC, 5, m.NI, 0, m.SLS, m.Raw))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// draftData is a draft-6 M3UA DATA: Protocol Data 1 (tag 2) holding an ITU MSU.
func draftData(m Msg) []byte {
	msu := []byte{m.NI<<6 | 5}
	l := m.DPC | m.OPC<<14 | uint32(m.SLS)<<28
	msu = binary.LittleEndian.AppendUint32(msu, l)
	msu = append(msu, m.Raw...)
	plen := 4 + len(msu)
	b := []byte{1, 0, 1, 1, 0, 0, 0, 0}
	b = binary.BigEndian.AppendUint16(b, 2)
	b = binary.BigEndian.AppendUint16(b, uint16(plen))
	b = append(b, msu...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	binary.BigEndian.PutUint32(b[4:8], uint32(len(b)))
	return b
}
