package stack

import (
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

// Stats counts what the core did; the loop copies them for metrics.
type Stats struct {
	Received, Sent      [256]uint64 // by message type
	DecodeErrors        uint64
	MalformedREL        uint64 // REL with an undecodable cause, handled as cause 31
	NotForUs            uint64 // wrong SI or DPC
	UnknownPeer         uint64
	UnknownCIC          uint64 // UCIC sent (or discarded when the message was a UCIC)
	Unexpected          uint64 // messages that do not fit the circuit's state
	Glare               uint64
	ReleaseCollisions   uint64 // REL received while our REL awaited its RLC
	RLCWithoutREL       uint64 // RLC on a circuit carrying a call: the call ends
	GlareRetries        uint64
	RepeatAttempts      uint64
	CallsOut, CallsIn   uint64
	Refused             map[Status]uint64
	UnrecognisedMessage uint64
	UnrecognisedParam   uint64
	SpareACL            uint64 // REL with an ACL value the variant leaves spare (or malformed): not acted on
	Shed                uint64 // inbound messages the admission hook refused
	HeldBack            uint64 // messages the send filter held back (ANSI MTP congestion)
	TimerExpiries       [numTimers]uint64
	StaleTimers         uint64 // call timers found running in a later epoch of their circuit (a missed stop)
	PausedReleases      uint64 // unanswered calls released because MTP paused their destination
	Takeovers           uint64 // active/standby takeovers (Takeover)
	ResumeRELs          uint64 // RELs repeated on MTP resume (one sent while paused was lost)
	ResumeGRAs          uint64 // GRAs repeated on MTP resume (one sent while paused may have been lost)
}

// Hooks let congestion control steer the core without the core knowing how it
// decides. A nil hook admits everything.
type Hooks struct {
	// AdmitOutgoing is asked before an IAM is sent; a non-OK status refuses the
	// outseize with that status.
	AdmitOutgoing func(dpc mtp.PointCode) Status
	// AdmitIncoming is asked for a new incoming IAM; false releases it at once
	// with cause 42 (switching equipment congestion).
	AdmitIncoming func(opc mtp.PointCode) bool
	// ReleaseACL is the Automatic Congestion Level to put in every REL we send
	// (0 for none).
	ReleaseACL func() isup.AutomaticCongestionLevel
	// Observe sees every inbound REL (for ACC) and the outcome of every call
	// attempt; it must not block.
	Observe func(Observation)
	// SendFilter, when set, may hold back a message to dpc by its ANSI priority
	// (MTP congestion); a held-back message is counted and not sent.
	SendFilter func(dpc mtp.PointCode, priority uint8) bool
}

// Observation is what congestion control learns from traffic.
type Observation struct {
	Kind     ObservationKind
	PC       mtp.PointCode
	Variant  isup.Variant // of the circuit group, for ObsRELReceived
	ACL      isup.AutomaticCongestionLevel
	Call     CallID
	Outgoing bool // for call start and end
	// InSetup (ObsCallEnded) tells an outgoing call that ended before any
	// backward message. Setup (ObsBackward, and ObsCallEnded with InSetup)
	// is the time since its outseize was queued; Waited (ObsBackward) the
	// part of it spent in the outbound queue. The stack
	// keeps them in its call record, which it looks up anyway, so that an
	// observer needs no table of its own keyed by call (sprc's admission).
	InSetup bool
	Setup   time.Duration
	Waited  time.Duration
}

// ObservationKind names an Observation.
type ObservationKind uint8

// Observations.
const (
	ObsRELReceived     ObservationKind = iota + 1 // ACL set if the REL carried one
	ObsCallStarted                                // a call began: outgoing IAM sent, or incoming IAM accepted
	ObsCallEnded                                  // a call (either direction) ended
	ObsT7Expired                                  // no backward message for an IAM
	ObsBackward                                   // a backward message arrived for an outgoing call
	ObsQueryAnswered                              // a CQR answered our CQM
	ObsQueryUnanswered                            // T28 expired
)

// core owns every circuit and call. It is not safe for concurrent use: the
// Stack's loop is its only caller.
type core struct {
	cfg        Config
	hooks      Hooks
	now        time.Time
	circuits   []circuit
	peers      []peer
	peerByPC   map[mtp.PointCode]int
	peerByName map[string]int
	calls      map[CallID]*call
	nextID     CallID
	// reqWait is how long the request being handled waited in the
	// outbound queue (set by the loop before it hands the request over).
	reqWait time.Duration
	timerq  timerHeap
	// timerqMax is the queue length at which stale entries are swept out.
	timerqMax int
	timerOrd  uint64
	groupOps  map[groupKey]groupOp
	// sentREL is the REL each circuit with T1 running waits on, for T1 to repeat.
	sentREL map[int32]*isup.Release
	stats   Stats
	// out sends an encoded message; it must not keep payload after returning.
	out  func(lbl mtp.Label, payload []byte)
	emit func(Event)
	buf  [272]byte // largest ISUP message: 3 + 255 octets of parameters and more
	// persist is called when the set of locally blocked circuits changed.
	persist func()
	// draining refuses new calls (graceful shutdown); drainingEdge mirrors
	// it for the edge.
	draining     bool
	drainingEdge atomic.Bool
	// relDiag names the unrecognised parameters of the REL being handled: the
	// RLC reports them (cause 99) instead of a CFN.
	relDiag []byte
	// maint: maintenance requests awaiting acknowledgement (maint.go);
	// stamps: when each circuit's state last changed.
	maint  *maintState
	stamps stamps
	// trace is nil while no trace runs (trace.go); traceRef keeps the tracer.
	trace, traceRef *tracer
	// iamRefused hears every incoming IAM refused (WithIAMRefused).
	iamRefused func(RefusedIAM)
}

// RefusedIAM is an incoming IAM the stack did not offer to a host: released
// at once (Cause set) or, on a circuit we blocked, discarded (Cause 0).
type RefusedIAM struct {
	OPC    mtp.PointCode
	CIC    uint16
	Cause  uint8
	Reason string
}

// reasonBlockedLocally: a non-test IAM on a circuit we blocked is discarded
// and our blocking announced again (Q.764 §2.8.2.3).
const reasonBlockedLocally = "circuit blocked locally: IAM discarded, blocking sent again"

// refusedIAM tells the WithIAMRefused hook.
func (c *core) refusedIAM(p int, ci int32, cause uint8, reason string) {
	if f := c.iamRefused; f != nil {
		f(RefusedIAM{OPC: c.peers[p].group.DPC, CIC: c.circuits[ci].cic, Cause: cause, Reason: reason})
	}
}

func newCore(cfg Config, now time.Time, out func(mtp.Label, []byte), emit func(Event)) *core {
	cfg.Timers = cfg.Timers.withDefaults()
	c := &core{
		cfg: cfg, now: now, out: out, emit: emit,
		peerByPC: map[mtp.PointCode]int{}, peerByName: map[string]int{},
		calls: map[CallID]*call{}, groupOps: map[groupKey]groupOp{}, sentREL: map[int32]*isup.Release{},
	}
	c.stats.Refused = map[Status]uint64{}
	c.buildCircuits()
	return c
}

// send encodes m for peer p and hands it to the MTP with a label whose SLS keeps
// each circuit's messages in order.
func (c *core) send(p int, m isup.Message) {
	pr := &c.peers[p]
	v := pr.group.Variant
	buf := c.buf[:]
	if n := isup.MarshalLen(m, v); n > len(buf) {
		buf = make([]byte, n)
	}
	n, err := isup.MarshalTo(buf, m, v)
	if err != nil {
		c.stats.DecodeErrors++ // our own message cannot be encoded: a bug, counted
		return
	}
	t := m.MessageType()
	lbl := mtp.Label{OPC: c.cfg.OPC, DPC: pr.group.DPC, SI: mtp.SIISUP, NI: c.cfg.NI, SLS: sls(m.CircuitID(), v)}
	if v == isup.ANSI {
		lbl.MP = ansiPriority(t)
		if f := c.hooks.SendFilter; f != nil && !f(lbl.DPC, lbl.MP) {
			c.stats.HeldBack++
			return
		}
	}
	c.stats.Sent[t]++
	if c.trace != nil {
		c.trace.message(c, p, lbl, m)
	}
	c.out(lbl, buf[:n])
}

// sls derives the signalling link selection from the CIC so that all messages of
// a circuit take one path and stay in order (4 bits ITU, 5 bits ANSI).
func sls(cic uint16, v isup.Variant) uint8 {
	if v == isup.ANSI {
		return uint8(cic & 0x1f)
	}
	return uint8(cic & 0x0f)
}

// ansiPriority is the MTP message priority of an ANSI ISUP message (T1.113): IAMs
// and circuit maintenance lowest so that they are shed first under MTP congestion.
func ansiPriority(t isup.MessageType) uint8 {
	switch t {
	case isup.ANM, isup.RLC:
		return 2
	case isup.ACM, isup.REL, isup.CPG, isup.COT, isup.CCR, isup.LPA, isup.UCIC, isup.SUS, isup.RES, isup.INR, isup.INF:
		return 1
	}
	return 0
}

// receive handles one MTP-TRANSFER indication. The core keeps b (decoded
// messages alias it), so the caller must not reuse it.
func (c *core) receive(lbl mtp.Label, b []byte) {
	if lbl.SI != mtp.SIISUP || lbl.DPC != c.cfg.OPC {
		c.stats.NotForUs++
		return
	}
	p, ok := c.peerByPC[lbl.OPC]
	if !ok {
		c.stats.UnknownPeer++
		return
	}
	pr := &c.peers[p]
	if !pr.userPart {
		c.userPartAvailable(p) // any message proves the far user part is back
	}
	m, err := isup.Decode(b, pr.group.Variant)
	if err != nil {
		c.stats.DecodeErrors++
		if m = c.malformedREL(b, pr.group.Variant); m == nil {
			return
		}
	}
	t := m.MessageType()
	c.stats.Received[t]++
	if c.trace != nil {
		c.trace.message(c, p, lbl, m)
	}
	ci, ok := c.circuitAt(p, m.CircuitID())
	if !ok {
		c.stats.UnknownCIC++
		if t != isup.UCIC {
			c.send(p, &isup.Simple{Kind: isup.UCIC, Circuit: isup.Circuit{CIC: m.CircuitID()}})
		}
		return
	}
	if c.circuits[ci].block&blkUnequipped != 0 && t != isup.UCIC {
		c.equippedAgain(ci)
	}
	if !c.compatible(p, ci, m) {
		return
	}
	c.dispatch(p, ci, m)
}

// malformedREL reads a REL whose cause (its only mandatory parameter) cannot be
// decoded, e.g. one octet long, as a REL with cause 31 normal, unspecified:
// the far end has released whatever we think of its cause, and discarding the
// REL would keep the call up until its T5 resets the circuit. This is the
// rule Q.931 §5.8.6 gives for a RELEASE with a missing or invalid cause, and
// 31 is the Q.850 default of the normal class. Nil for anything else.
func (c *core) malformedREL(b []byte, v isup.Variant) isup.Message {
	cic, t, err := isup.Peek(b, v)
	if err != nil || t != isup.REL {
		return nil
	}
	c.stats.MalformedREL++
	return &isup.Release{Circuit: isup.Circuit{CIC: cic}, Cause: isup.NewCause(isup.LocationUser, isup.CauseNormalUnspecified)}
}

func (c *core) dispatch(p int, ci int32, m isup.Message) {
	switch x := m.(type) {
	case *isup.InitialAddress:
		if !c.iamOnBlocked(p, ci, x) {
			c.onIAM(p, ci, x)
		}
	case *isup.AddressComplete, *isup.CallProgress, *isup.Connect, *isup.Answer:
		c.onBackward(p, ci, m)
	case *isup.Release:
		c.onREL(p, ci, x)
	case *isup.ReleaseComplete:
		c.onRLC(p, ci)
	case *isup.SuspendResume:
		c.onSuspendResume(p, ci, x)
	case *isup.Continuity:
		c.onCOT(p, ci, x)
	case *isup.InformationRequest:
		// We keep no information to offer beyond the IAM: say so (Q.764 §2.1.6).
		c.send(p, &isup.Information{Circuit: x.Circuit, Indicators: 0x0001})
	case *isup.Simple:
		c.onSimple(p, ci, x)
	case *isup.GroupReset:
		c.onGroupReset(p, ci, x)
	case *isup.GroupSupervision:
		c.onGroupSupervision(p, ci, x)
	case *isup.CircuitQuery:
		c.onCQM(p, ci, x)
	case *isup.CircuitQueryResponse:
		c.onCQR(p, ci, x)
	default:
		// SAM, INF, CFN, FAC, APM and the rest: part of a call, passed to its host.
		if cl := c.circuits[ci].call; cl != nil {
			c.emit(CallProgress{Call: cl.id, Owner: cl.owner, Message: m})
			return
		}
		if x, ok := m.(*isup.Generic); ok && x.Kind == isup.UPT {
			c.send(p, &isup.Generic{Kind: isup.UPA, Circuit: x.Circuit, Optional: isup.Optional{}})
			return
		}
		c.stats.Unexpected++
	}
}

// onSimple handles the messages that are only a CIC and a type.
func (c *core) onSimple(p int, ci int32, m *isup.Simple) {
	switch m.Kind {
	case isup.BLO:
		c.onBLO(p, ci)
	case isup.UBL:
		c.onUBL(p, ci)
	case isup.BLA:
		c.onBLA(p, ci)
	case isup.UBA:
		c.onUBA(p, ci)
	case isup.RSC:
		c.onRSC(p, ci)
	case isup.UCIC:
		c.onUCIC(p, ci)
	case isup.OLM:
		c.onOLM(p, ci)
	case isup.CCR:
		c.onCCR(p, ci)
	default: // LPA, CRA, CVT
		c.stats.Unexpected++
	}
}

// request handles one host request.
func (c *core) request(r Request) {
	if c.trace != nil {
		c.trace.request(c, r)
	}
	switch x := r.(type) {
	case Outseize:
		c.outseize(x)
	case Alert:
		c.alert(x)
	case Progress:
		c.progress(x)
	case Answer:
		c.answer(x)
	case Release:
		c.release(x)
	case Accept:
		cl, ok := c.calls[x.Call]
		if !ok {
			c.result(x.Tag, x.Call, StatusUnknownCall, "", nil)
			return
		}
		cl.owner = x.Owner
		c.result(x.Tag, x.Call, StatusOK, "", cl.owner)
	case Maintenance:
		c.maintenance(x)
	case Drain:
		c.draining = true
		c.drainingEdge.Store(true)
		c.result(x.Tag, 0, StatusOK, "", nil)
	case ReleaseAll:
		cause := x.Cause
		if cause == 0 {
			cause = isup.CauseTemporaryFailure
		}
		for _, cl := range c.calls {
			c.releaseCall(cl, cause, isup.LocationPrivateLocal, "released at shutdown", false)
		}
		c.result(x.Tag, 0, StatusOK, "", nil)
	case SetTimers:
		c.cfg.Timers = x.Timers.withDefaults()
		c.result(x.Tag, 0, StatusOK, "", nil)
	default:
		c.emit(Result{Status: StatusBadRequest, Detail: "unknown request"})
	}
}

func (c *core) result(tag uint64, id CallID, st Status, detail string, owner any) {
	if st != StatusOK {
		c.stats.Refused[st]++
	}
	c.emit(Result{Tag: tag, Call: id, Status: st, Detail: detail, Owner: owner})
}

func (c *core) observe(o Observation) {
	if c.hooks.Observe != nil {
		c.hooks.Observe(o)
	}
}
