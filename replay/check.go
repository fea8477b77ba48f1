package replay

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/isupgw/isupgw/isup"
)

// Kind classifies a Violation.
type Kind uint8

// Violation kinds.
const (
	KindState      Kind = iota + 1 // the message does not fit the call's or circuit's state
	KindTwoCalls                   // a CIC used by two calls at once (incl. dual seizure)
	KindMissingRLC                 // a REL never answered by RLC (or a new IAM came first)
	KindBlocked                    // a circuit seized although the other end blocked it
	KindUnanswered                 // a supervision request (RSC, GRS, BLO, ...) with no acknowledgement
	KindMismatch                   // an acknowledgement that does not match its request
	KindDecode                     // a message that could not be decoded
)

var kindNames = map[Kind]string{
	KindState:      "message does not fit the state",
	KindTwoCalls:   "CIC used by two calls at once",
	KindMissingRLC: "missing RLC",
	KindBlocked:    "seizure of a blocked circuit",
	KindUnanswered: "request never acknowledged",
	KindMismatch:   "acknowledgement does not match the request",
	KindDecode:     "undecodable message",
}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Violation is one departure from the Q.764 procedures.
type Violation struct {
	Frame    int // the offending message's frame (for unanswered requests, the request's)
	Time     time.Time
	OPC, DPC uint32
	CIC      uint16
	Type     isup.MessageType
	Kind     Kind
	Text     string
	Call     int // the call concerned, 0 if none
}

func (v Violation) String() string {
	return fmt.Sprintf("frame %d %d>%d cic=%d %s: %s", v.Frame, v.OPC, v.DPC, v.CIC, v.Type, v.Text)
}

// End says how a call ended.
type End uint8

// Call ends.
const (
	EndNone       End = iota // still up when the capture ends
	EndReleased              // REL, then RLC
	EndNoRLC                 // REL with no RLC in the capture
	EndReset                 // RSC or GRS
	EndBlocked               // hardware-oriented group blocking
	EndUnequipped            // UCIC
	EndSuperseded            // a new IAM on the circuit
)

var endNames = [...]string{"in progress", "released", "released, no RLC", "reset", "blocked (hardware)", "unequipped CIC", "superseded by a new IAM"}

func (e End) String() string {
	if int(e) < len(endNames) {
		return endNames[e]
	}
	return fmt.Sprintf("End(%d)", uint8(e))
}

// Call is one call seen in a capture.
type Call struct {
	ID       int
	OPC, DPC uint32 // OPC sent the IAM (for a call begun before the capture: the exchange that did not send its first backward message, or 0)
	CIC      uint16
	Partial  bool // begun before the capture: no IAM seen
	Frame    int  // IAM frame (first frame seen for a partial call)
	Time     time.Time
	Called   string
	Calling  string
	Alerted  bool // ACM (or CPG) seen
	Answered bool // ANM or CON seen
	End      End
	EndFrame int
	EndTime  time.Time
	// Release: who sent the first REL, with its cause.
	Released   bool
	ReleasedBy uint32
	Cause      uint8
	Location   uint8
	Messages   int
}

// circuitKey names a circuit: the two exchanges (A < B) and the CIC.
type circuitKey struct {
	A, B uint32
	CIC  uint16
}

// Blocking bits per side.
const (
	blkMaint uint8 = 1 << iota
	blkHW
)

// active is a call in progress on a circuit, indexed by the side that sent
// its IAM.
type active struct {
	*Call
	acm      bool
	answered bool
	sus      [2]bool // suspended by side
}

type circuit struct {
	key    circuitKey
	seen   bool // a message was seen before the current one
	synced bool // the call state is known (IAM, RLC or a reset seen)
	calls  [2]*active
	// Pending requests by the side that sent them: the frame (0 = none).
	rel, rsc, blo, ubl, grs [2]int
	relCall                 [2]int // call released by that REL
	blocked                 [2]uint8
	blockFrame              [2]int
	unequipped              [2]bool
}

type groupKey struct {
	circuitKey
	side int
	kind isup.MessageType // GRS, CGB, CGU or CQM
}

type groupReq struct {
	frame int
	time  time.Time
	typ   uint8
	rng   uint8
	// status bits of a CGB/CGU, one per circuit of the range
	status []bool
}

// Analyzer follows every circuit of a capture through the Q.764 procedures.
// Feed it messages in capture order with Add, then call Finish.
type Analyzer struct {
	variant  isup.Variant
	circuits map[circuitKey]*circuit
	groups   map[groupKey]*groupReq
	calls    []*Call
	viol     []Violation
	counts   [256]int
	msgs     int
	bad      int
	cfn      []Msg
	procs    int // supervision procedures started
	first    time.Time
	last     time.Time
	finished bool

	cur *Msg // the message being checked
}

// NewAnalyzer returns an Analyzer for the ISUP variant.
func NewAnalyzer(v isup.Variant) *Analyzer {
	return &Analyzer{variant: v, circuits: map[circuitKey]*circuit{}, groups: map[groupKey]*groupReq{}}
}

// side returns the index of the message's sender in its circuit key.
func keyOf(m *Msg, cic uint16) (circuitKey, int) {
	if m.OPC <= m.DPC {
		return circuitKey{m.OPC, m.DPC, cic}, 0
	}
	return circuitKey{m.DPC, m.OPC, cic}, 1
}

func (a *Analyzer) circuit(k circuitKey) *circuit {
	c := a.circuits[k]
	if c == nil {
		c = &circuit{key: k}
		a.circuits[k] = c
	}
	return c
}

// pc returns the point code of a side of a circuit.
func (k circuitKey) pc(side int) uint32 {
	if side == 0 {
		return k.A
	}
	return k.B
}

func (a *Analyzer) violate(kind Kind, call int, format string, args ...any) {
	m := a.cur
	a.viol = append(a.viol, Violation{Frame: m.Frame, Time: m.Time, OPC: m.OPC, DPC: m.DPC, CIC: m.CIC, Type: m.Type,
		Kind: kind, Call: call, Text: fmt.Sprintf(format, args...)})
}

// Add checks one message and returns the call it belongs to (0 for none).
func (a *Analyzer) Add(m *Msg) int {
	a.cur = m
	a.msgs++
	a.counts[m.Type]++
	if a.first.IsZero() || m.Time.Before(a.first) {
		a.first = m.Time
	}
	if m.Time.After(a.last) {
		a.last = m.Time
	}
	if m.Msg == nil {
		a.bad++
		a.violate(KindDecode, 0, "cannot decode: %v", m.Err)
		return 0
	}
	k, s := keyOf(m, m.CIC)
	switch m.Type {
	case isup.GRS, isup.GRA, isup.CGB, isup.CGBA, isup.CGU, isup.CGUA, isup.CQM, isup.CQR:
		return a.group(m, k, s)
	}
	c := a.circuit(k)
	id := a.circuitMsg(m, c, s)
	c.seen = true
	if id > 0 {
		a.calls[id-1].Messages++
	}
	return id
}

// circuitMsg handles the messages that concern one circuit.
func (a *Analyzer) circuitMsg(m *Msg, c *circuit, s int) int {
	o := 1 - s
	switch m.Type {
	case isup.IAM:
		return a.iam(m, c, s)
	case isup.ACM, isup.CON, isup.ANM:
		return a.backward(m, c, s)
	case isup.CPG:
		cl := c.calls[o]
		if cl == nil {
			cl = c.calls[s]
		}
		if cl == nil {
			return a.noCall(m, c, s, true)
		}
		if !cl.acm && !cl.answered && !cl.Partial {
			a.violate(KindState, cl.ID, "CPG before ACM (call %d, IAM at frame %d)", cl.ID, cl.Frame)
		}
		return cl.ID
	case isup.SAM, isup.COT:
		cl := c.calls[s]
		if cl == nil {
			return a.noCall(m, c, s, false)
		}
		if cl.answered || (m.Type == isup.SAM && cl.acm && a.variant == isup.ANSI) {
			a.violate(KindState, cl.ID, "%s after %s (call %d)", m.Type, cl.stateName(), cl.ID)
		}
		return cl.ID
	case isup.SUS, isup.RES:
		cl := c.calls[o]
		if cl == nil {
			cl = c.calls[s]
		}
		if cl == nil {
			return a.noCall(m, c, s, true)
		}
		if m.Type == isup.SUS {
			switch {
			case !cl.answered && !cl.Partial:
				a.violate(KindState, cl.ID, "SUS before the call was answered (call %d is %s)", cl.ID, cl.stateName())
			case cl.sus[s]:
				a.violate(KindState, cl.ID, "second SUS from %d without RES (call %d)", m.OPC, cl.ID)
			}
			cl.sus[s] = true
		} else {
			if !cl.sus[s] && !cl.Partial {
				a.violate(KindState, cl.ID, "RES from %d with no SUS from it (call %d)", m.OPC, cl.ID)
			}
			cl.sus[s] = false
		}
		return cl.ID
	case isup.INR, isup.INF, isup.FOT, isup.USR, isup.CRG, isup.IDR, isup.IRS, isup.SGM, isup.NRM, isup.FAC,
		isup.APM, isup.PRI, isup.SDN, isup.CMR, isup.CMC, isup.CMRJ, isup.FAA, isup.FRJ, isup.LOP, isup.PAM:
		cl := c.calls[o]
		if cl == nil {
			cl = c.calls[s]
		}
		if cl == nil {
			return a.noCall(m, c, s, true)
		}
		return cl.ID
	case isup.REL:
		return a.rel(m, c, s)
	case isup.RLC:
		return a.rlc(m, c, s)
	case isup.RSC:
		a.procs++
		a.endCalls(c, EndReset)
		c.rel, c.relCall = [2]int{}, [2]int{}
		c.blocked[s] &^= blkMaint // the far end's "remotely blocked" ends
		c.rsc[s] = m.Frame
		c.synced = true
	case isup.BLO:
		if c.blo[s] == 0 {
			a.procs++
		}
		c.blocked[s] |= blkMaint
		c.blockFrame[s] = m.Frame
		c.blo[s], c.ubl[s] = m.Frame, 0
	case isup.BLA:
		switch {
		case c.blo[o] != 0:
			c.blo[o] = 0
		case !c.seen || c.blocked[o]&blkMaint != 0:
			// The BLO came before the capture, or this repeats an acknowledgement.
		default:
			a.violate(KindState, 0, "BLA with no BLO from %d", c.key.pc(o))
		}
	case isup.UBL:
		if c.ubl[s] == 0 {
			a.procs++
		}
		c.blocked[s] &^= blkMaint
		c.ubl[s], c.blo[s] = m.Frame, 0
	case isup.UBA:
		switch {
		case c.ubl[o] != 0:
			c.ubl[o] = 0
		case !c.seen || c.blocked[o]&blkMaint == 0 && c.blockFrame[o] != 0:
			// The UBL came before the capture, or this repeats an acknowledgement.
		default:
			a.violate(KindState, 0, "UBA with no UBL from %d", c.key.pc(o))
		}
	case isup.UCIC:
		c.unequipped[s] = true
		if cl := c.calls[o]; cl != nil {
			a.endCall(c, o, EndUnequipped)
		}
		c.rel[o], c.rsc[o], c.blo[o], c.ubl[o] = 0, 0, 0, 0
	case isup.CFN:
		a.cfn = append(a.cfn, *m)
		if cl := c.calls[o]; cl != nil {
			return cl.ID
		}
		if cl := c.calls[s]; cl != nil {
			return cl.ID
		}
	}
	return 0
}

// noCall handles a call message on a circuit with no call: a call begun
// before the capture when the circuit is new, otherwise a violation.
// backward says the sender is the called side.
func (a *Analyzer) noCall(m *Msg, c *circuit, s int, backward bool) int {
	if !c.synced {
		fwd := s
		if backward {
			fwd = 1 - s
		}
		return a.newCall(m, c, fwd, true).ID
	}
	why := "no call on the circuit"
	if c.rel[0] != 0 || c.rel[1] != 0 {
		why = "the call was released (REL at frame " + itoa(max(c.rel[0], c.rel[1])) + ")"
	}
	a.violate(KindState, 0, "%s with %s", m.Type, why)
	return 0
}

func (a *Analyzer) newCall(m *Msg, c *circuit, fwd int, partial bool) *active {
	cl := &active{Call: &Call{ID: len(a.calls) + 1, OPC: c.key.pc(fwd), DPC: c.key.pc(1 - fwd), CIC: c.key.CIC,
		Partial: partial, Frame: m.Frame, Time: m.Time}}
	if partial && m.Type == isup.REL {
		cl.OPC, cl.DPC = 0, 0 // direction unknown
	}
	a.calls = append(a.calls, cl.Call)
	c.calls[fwd] = cl
	return cl
}

func (cl *active) stateName() string {
	switch {
	case cl.answered:
		return "answered"
	case cl.acm:
		return "alerting"
	}
	return "set up (IAM sent)"
}

func (a *Analyzer) iam(m *Msg, c *circuit, s int) int {
	o := 1 - s
	if f := max(c.rel[0], c.rel[1]); f != 0 {
		a.violate(KindMissingRLC, 0, "IAM before the RLC for the REL at frame %d", f)
		c.rel, c.relCall = [2]int{}, [2]int{}
	}
	if f := max(c.rsc[0], c.rsc[1]); f != 0 {
		a.violate(KindState, 0, "IAM while the RSC at frame %d awaits its RLC", f)
		c.rsc = [2]int{}
	}
	if f := max(c.grs[0], c.grs[1]); f != 0 {
		a.violate(KindState, 0, "IAM while the GRS at frame %d awaits its GRA", f)
	}
	if c.blocked[o] != 0 && !c.unequipped[o] {
		a.violate(KindBlocked, 0, "IAM from %d on a circuit that %d blocked (frame %d)", m.OPC, c.key.pc(o), c.blockFrame[o])
	}
	if old := c.calls[s]; old != nil {
		a.violate(KindTwoCalls, old.ID, "IAM while call %d (frame %d, %s) is still up", old.ID, old.Frame, old.stateName())
		a.endCall(c, s, EndSuperseded)
	}
	if other := c.calls[o]; other != nil {
		if !other.acm && !other.answered {
			a.violate(KindTwoCalls, other.ID, "dual seizure: IAM from both ends (call %d, IAM at frame %d)", other.ID, other.Frame)
		} else {
			a.violate(KindTwoCalls, other.ID, "IAM while call %d from the other end (frame %d) is %s", other.ID, other.Frame, other.stateName())
		}
	}
	cl := a.newCall(m, c, s, false)
	if iam, ok := m.Msg.(*isup.InitialAddress); ok {
		cl.Called = iam.CalledParty.Digits.String()
		if cg, ok, err := iam.CallingParty(); ok && err == nil {
			cl.Calling = cg.Digits.String()
		}
	}
	c.synced = true
	return cl.ID
}

// backward handles ACM, CON and ANM from s for the call set up by the other side.
func (a *Analyzer) backward(m *Msg, c *circuit, s int) int {
	o := 1 - s
	cl := c.calls[o]
	if cl == nil {
		if c.rel[s] != 0 {
			// Sent before the REL from this same side? No: after its own REL.
			a.violate(KindState, 0, "%s after %d sent REL (frame %d)", m.Type, m.OPC, c.rel[s])
			return 0
		}
		if c.rel[o] != 0 {
			return c.relCall[o] // crossed the other side's REL: a race, not an error
		}
		if c.calls[s] != nil {
			a.violate(KindState, c.calls[s].ID, "%s from %d, which sent the IAM of call %d itself", m.Type, m.OPC, c.calls[s].ID)
			return c.calls[s].ID
		}
		if c.synced {
			return a.noCall(m, c, s, true)
		}
		cl = a.newCall(m, c, o, true) // begun before the capture
	}
	switch m.Type {
	case isup.ACM:
		switch {
		case cl.answered:
			a.violate(KindState, cl.ID, "ACM after the answer (call %d)", cl.ID)
		case cl.acm:
			a.violate(KindState, cl.ID, "second ACM (call %d)", cl.ID)
		}
		cl.acm, cl.Alerted = true, true
	case isup.CON:
		switch {
		case cl.answered:
			a.violate(KindState, cl.ID, "CON after the answer (call %d)", cl.ID)
		case cl.acm:
			a.violate(KindState, cl.ID, "CON after ACM: ANM expected (call %d)", cl.ID)
		}
		cl.answered, cl.Answered = true, true
	case isup.ANM:
		if cl.answered {
			a.violate(KindState, cl.ID, "second answer (call %d)", cl.ID)
		}
		cl.answered, cl.Answered = true, true
	}
	return cl.ID
}

func (a *Analyzer) rel(m *Msg, c *circuit, s int) int {
	o := 1 - s
	if c.rel[s] != 0 {
		return c.relCall[s] // repeated REL (T1 expiry): allowed
	}
	var id int
	for _, side := range []int{s, o} {
		if cl := c.calls[side]; cl != nil {
			if id == 0 {
				id = cl.ID
			}
			a.release(cl, m)
			a.endCall(c, side, EndNoRLC)
		}
	}
	if id == 0 && c.rel[o] != 0 {
		id = c.relCall[o] // both ends released at once: allowed
	} else if id == 0 {
		if c.synced {
			a.violate(KindState, 0, "REL with no call on the circuit")
		} else {
			cl := a.newCall(m, c, o, true)
			id = cl.ID
			a.release(cl, m)
			a.endCall(c, o, EndNoRLC)
		}
	}
	c.rel[s], c.relCall[s] = m.Frame, id
	return id
}

func (a *Analyzer) release(cl *active, m *Msg) {
	if cl.Released {
		return
	}
	cl.Released, cl.ReleasedBy = true, m.OPC
	if r, ok := m.Msg.(*isup.Release); ok {
		cl.Cause, cl.Location = r.Cause.Value, r.Cause.Location
	}
}

func (a *Analyzer) rlc(m *Msg, c *circuit, s int) int {
	o := 1 - s
	id := c.relCall[o]
	// After a release collision each end answers the other's REL with RLC.
	switch {
	case c.rel[o] != 0:
		a.completeRelease(c, o)
	case c.rsc[o] != 0:
		c.rsc[o] = 0
	case c.rel[s] != 0:
		a.violate(KindState, c.relCall[s], "RLC from %d, which sent the REL at frame %d itself", m.OPC, c.rel[s])
	case !c.synced:
		// The REL or RSC came before the capture.
	default:
		a.violate(KindState, 0, "RLC with no REL or RSC from %d", c.key.pc(o))
	}
	for side := range c.calls {
		if c.calls[side] != nil {
			if id == 0 {
				id = c.calls[side].ID
			}
			a.endCall(c, side, EndReleased)
		}
	}
	c.synced = true
	return id
}

// completeRelease marks the call ended by side's REL as released with RLC.
func (a *Analyzer) completeRelease(c *circuit, side int) {
	if id := c.relCall[side]; id > 0 && id <= len(a.calls) {
		cl := a.calls[id-1]
		if cl.End == EndNoRLC {
			cl.End, cl.EndFrame, cl.EndTime = EndReleased, a.cur.Frame, a.cur.Time
		}
	}
	c.rel[side], c.relCall[side] = 0, 0
}

func (a *Analyzer) endCall(c *circuit, side int, e End) {
	cl := c.calls[side]
	if cl == nil {
		return
	}
	cl.End, cl.EndFrame, cl.EndTime = e, a.cur.Frame, a.cur.Time
	c.calls[side] = nil
}

func (a *Analyzer) endCalls(c *circuit, e End) {
	for side := range c.calls {
		a.endCall(c, side, e)
	}
}

// group handles the range messages: GRS/GRA, CGB/CGBA, CGU/CGUA, CQM/CQR.
func (a *Analyzer) group(m *Msg, k circuitKey, s int) int {
	o := 1 - s
	var rng uint8
	var status []byte
	var typ uint8
	switch x := m.Msg.(type) {
	case *isup.GroupReset:
		rng, status = x.RangeAndStatus.Range, x.RangeAndStatus.Status
	case *isup.GroupSupervision:
		rng, status, typ = x.RangeAndStatus.Range, x.RangeAndStatus.Status, x.Type.Kind()
	case *isup.CircuitQuery:
		rng = x.RangeAndStatus.Range
	case *isup.CircuitQueryResponse:
		rng, status = x.RangeAndStatus.Range, x.States
	}
	bits := func() []bool {
		b := make([]bool, int(rng)+1)
		for i := range b {
			b[i] = i/8 < len(status) && status[i/8]&(1<<(i%8)) != 0
		}
		return b
	}
	// each visits the circuits of the range; CICs past the variant's maximum
	// do not exist.
	each := func(f func(c *circuit, i int)) {
		for i := 0; i <= int(rng); i++ {
			cic := int(k.CIC) + i
			if cic > int(a.variant.MaxCIC()) {
				break
			}
			f(a.circuit(circuitKey{k.A, k.B, uint16(cic)}), i)
		}
	}
	head := a.circuit(k)
	seenBefore := head.seen
	defer func() { head.seen = true }()

	request := func(kind isup.MessageType) {
		gk := groupKey{k, s, kind}
		if _, again := a.groups[gk]; !again {
			a.procs++
		}
		a.groups[gk] = &groupReq{frame: m.Frame, time: m.Time, typ: typ, rng: rng, status: bits()}
	}
	answer := func(req isup.MessageType) (*groupReq, bool) {
		gk := groupKey{k, o, req}
		g := a.groups[gk]
		if g == nil {
			if seenBefore {
				a.violate(KindState, 0, "%s with no %s from %d", m.Type, req, k.pc(o))
			}
			return nil, false
		}
		delete(a.groups, gk)
		if g.rng != rng {
			a.violate(KindMismatch, 0, "%s range %d, the %s at frame %d had range %d", m.Type, rng, req, g.frame, g.rng)
		}
		return g, true
	}

	switch m.Type {
	case isup.GRS:
		if a.variant == isup.ITU && (rng < 1 || rng > 31) {
			a.violate(KindMismatch, 0, "GRS range %d outside 1..31", rng)
		}
		request(isup.GRS)
		each(func(c *circuit, _ int) {
			a.endCalls(c, EndReset)
			c.rel, c.relCall, c.rsc = [2]int{}, [2]int{}, [2]int{}
			c.blocked[s] &^= blkMaint
			c.grs[s] = m.Frame
			c.synced = true
		})
	case isup.GRA:
		if _, ok := answer(isup.GRS); ok || !seenBefore {
			// Status bit set: the circuit is locally blocked for maintenance at the GRA's sender.
			each(func(c *circuit, i int) {
				c.grs[o] = 0
				if i/8 < len(status) && status[i/8]&(1<<(i%8)) != 0 {
					c.blocked[s] |= blkMaint
					c.blockFrame[s] = m.Frame
				} else {
					c.blocked[s] &^= blkMaint
				}
			})
		}
	case isup.CGB, isup.CGU:
		request(m.Type)
		bit := blkMaint
		if typ == uint8(isup.HardwareFailureOriented) {
			bit = blkHW
		}
		b := bits()
		each(func(c *circuit, i int) {
			if !b[i] {
				return
			}
			if m.Type == isup.CGB {
				c.blocked[s] |= bit
				c.blockFrame[s] = m.Frame
				if bit == blkHW {
					// Hardware blocking releases the calls on the circuit.
					a.endCalls(c, EndBlocked)
					c.rel, c.relCall = [2]int{}, [2]int{}
				}
			} else {
				c.blocked[s] &^= bit
			}
		})
	case isup.CGBA, isup.CGUA:
		req := isup.CGB
		if m.Type == isup.CGUA {
			req = isup.CGU
		}
		if g, ok := answer(req); ok {
			if g.typ != typ {
				a.violate(KindMismatch, 0, "%s type %d, the %s at frame %d had type %d", m.Type, typ, req, g.frame, g.typ)
			}
			if g.rng == rng && !slices.Equal(g.status, bits()) {
				a.violate(KindMismatch, 0, "%s acknowledges CICs %s, the %s at frame %d asked for %s",
					m.Type, cicList(k.CIC, bits()), req, g.frame, cicList(k.CIC, g.status))
			}
		}
	case isup.CQM:
		request(isup.CQM)
	case isup.CQR:
		if _, ok := answer(isup.CQM); ok && len(status) != int(rng)+1 {
			a.violate(KindMismatch, 0, "CQR with %d circuit states for range %d (want %d)", len(status), rng, int(rng)+1)
		}
	}
	return 0
}

func cicList(first uint16, bits []bool) string {
	var parts []string
	for i, b := range bits {
		if b {
			parts = append(parts, itoa(int(first)+i))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// Finish ends the analysis at the end of the capture: requests still waiting
// for their acknowledgement become violations, calls still up stay in
// progress. It may be called once; Add must not be called after it.
func (a *Analyzer) Finish() {
	if a.finished {
		return
	}
	a.finished = true
	keys := make([]circuitKey, 0, len(a.circuits))
	for k := range a.circuits {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y circuitKey) int {
		if x.A != y.A {
			return int(x.A) - int(y.A)
		}
		if x.B != y.B {
			return int(x.B) - int(y.B)
		}
		return int(x.CIC) - int(y.CIC)
	})
	add := func(k circuitKey, side int, frame int, typ isup.MessageType, kind Kind, text string) {
		a.viol = append(a.viol, Violation{Frame: frame, OPC: k.pc(side), DPC: k.pc(1 - side), CIC: k.CIC, Type: typ,
			Kind: kind, Text: text})
	}
	for _, k := range keys {
		c := a.circuits[k]
		for side := 0; side < 2; side++ {
			if f := c.rel[side]; f != 0 {
				add(k, side, f, isup.REL, KindMissingRLC, "REL never answered by RLC")
			}
			if f := c.rsc[side]; f != 0 {
				add(k, side, f, isup.RSC, KindUnanswered, "RSC never answered by RLC")
			}
			if f := c.blo[side]; f != 0 {
				add(k, side, f, isup.BLO, KindUnanswered, "BLO never answered by BLA")
			}
			if f := c.ubl[side]; f != 0 {
				add(k, side, f, isup.UBL, KindUnanswered, "UBL never answered by UBA")
			}
		}
	}
	gks := make([]groupKey, 0, len(a.groups))
	for k := range a.groups {
		gks = append(gks, k)
	}
	slices.SortFunc(gks, func(x, y groupKey) int { return a.groups[x].frame - a.groups[y].frame })
	ack := map[isup.MessageType]isup.MessageType{isup.GRS: isup.GRA, isup.CGB: isup.CGBA, isup.CGU: isup.CGUA, isup.CQM: isup.CQR}
	for _, k := range gks {
		g := a.groups[k]
		add(k.circuitKey, k.side, g.frame, k.kind, KindUnanswered, fmt.Sprintf("%s (range %d) never answered by %s", k.kind, g.rng, ack[k.kind]))
	}
	// Stamp the times of end-of-capture violations from the frames they name.
	slices.SortStableFunc(a.viol, func(x, y Violation) int { return x.Frame - y.Frame })
}

func itoa(n int) string { return fmt.Sprint(n) }
