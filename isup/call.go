package isup

// Call control messages (Q.763 Tables 32-..., T1.113). Each layout method is the
// message's format: fixed parameters, pointer area, variable parameters, optional
// part.

// InitialAddress is the IAM. ITU carries Transmission Medium Requirement as a fixed
// parameter; ANSI instead carries User Service Information as a variable one.
type InitialAddress struct {
	Circuit
	NatureOfConnection   NatureOfConnection
	ForwardCall          ForwardCallIndicators
	CallingPartyCategory CallingPartyCategory
	TransmissionMedium   TransmissionMediumRequirement // ITU only
	UserServiceInfo      UserServiceInformation        // ANSI only
	CalledParty          CalledPartyNumber
	Optional             Optional
}

func (m *InitialAddress) MessageType() MessageType { return IAM }
func (m *InitialAddress) layout(c *codec) {
	c.fixed(&m.NatureOfConnection)
	c.fixed(&m.ForwardCall)
	c.fixed(&m.CallingPartyCategory)
	if c.variant == ANSI {
		c.pointers(2, true)
		c.variable(&m.UserServiceInfo)
	} else {
		c.fixed(&m.TransmissionMedium)
		c.pointers(1, true)
	}
	c.variable(&m.CalledParty)
	c.optional(&m.Optional)
}

// CallingParty decodes the optional calling party number.
func (m *InitialAddress) CallingParty() (CallingPartyNumber, bool, error) {
	var p CallingPartyNumber
	ok, err := m.Optional.Decode(&p)
	return p, ok, err
}

// SubsequentAddress is the SAM (ITU overlap sending).
type SubsequentAddress struct {
	Circuit
	SubsequentNumber SubsequentNumber
	Optional         Optional
}

func (m *SubsequentAddress) MessageType() MessageType { return SAM }
func (m *SubsequentAddress) layout(c *codec) {
	c.pointers(1, true)
	c.variable(&m.SubsequentNumber)
	c.optional(&m.Optional)
}

// AddressComplete is the ACM.
type AddressComplete struct {
	Circuit
	BackwardCall BackwardCallIndicators
	Optional     Optional
}

func (m *AddressComplete) MessageType() MessageType { return ACM }
func (m *AddressComplete) layout(c *codec) {
	c.fixed(&m.BackwardCall)
	c.pointers(0, true)
	c.optional(&m.Optional)
}

// Connect is the CON (ITU): answer without a preceding ACM.
type Connect struct {
	Circuit
	BackwardCall BackwardCallIndicators
	Optional     Optional
}

func (m *Connect) MessageType() MessageType { return CON }
func (m *Connect) layout(c *codec) {
	c.fixed(&m.BackwardCall)
	c.pointers(0, true)
	c.optional(&m.Optional)
}

// Answer is the ANM.
type Answer struct {
	Circuit
	Optional Optional
}

func (m *Answer) MessageType() MessageType { return ANM }
func (m *Answer) layout(c *codec) {
	c.pointers(0, true)
	c.optional(&m.Optional)
}

// CallProgress is the CPG.
type CallProgress struct {
	Circuit
	Event    EventInformation
	Optional Optional
}

func (m *CallProgress) MessageType() MessageType { return CPG }
func (m *CallProgress) layout(c *codec) {
	c.fixed(&m.Event)
	c.pointers(0, true)
	c.optional(&m.Optional)
}

// Release is the REL. The Automatic Congestion Level rides in its optional part.
type Release struct {
	Circuit
	Cause    CauseIndicators
	Optional Optional
}

func (m *Release) MessageType() MessageType { return REL }
func (m *Release) layout(c *codec) {
	c.pointers(1, true)
	c.variable(&m.Cause)
	c.optional(&m.Optional)
}

// ACL returns the automatic congestion level, 0 when absent or malformed.
func (m *Release) ACL() AutomaticCongestionLevel {
	p, ok := m.Optional.Find(ParamAutomaticCongestionLevel)
	if !ok || len(p.Value) != 1 {
		return 0
	}
	return AutomaticCongestionLevel(p.Value[0])
}

// ReleaseComplete is the RLC. ITU allows an optional part (e.g. a cause); ANSI RLC
// has no parameters at all.
type ReleaseComplete struct {
	Circuit
	Optional Optional // always nil in ANSI
}

func (m *ReleaseComplete) MessageType() MessageType { return RLC }
func (m *ReleaseComplete) layout(c *codec) {
	if c.variant == ANSI {
		return
	}
	if c.mode == decoding && c.off == len(c.buf) {
		// An ITU RLC with nothing after the type (no optional-part pointer, as
		// some exchanges send it, ANSI-style) is still an RLC: read as "no
		// optional part" rather than refused, which would leave the circuit
		// waiting for T5. Encoding always writes the pointer (Q.763 Table 34).
		m.Optional = nil
		return
	}
	c.pointers(0, true)
	c.optional(&m.Optional)
}

// SuspendResume is the SUS or the RES; both carry the suspend/resume indicators.
type SuspendResume struct {
	Circuit
	Kind       MessageType // SUS or RES
	Indicators SuspendResumeIndicators
	Optional   Optional
}

func (m *SuspendResume) MessageType() MessageType { return m.Kind }
func (m *SuspendResume) layout(c *codec) {
	c.fixed(&m.Indicators)
	c.pointers(0, true)
	c.optional(&m.Optional)
}

// Continuity is the COT.
type Continuity struct {
	Circuit
	Indicators ContinuityIndicators
}

func (m *Continuity) MessageType() MessageType { return COT }
func (m *Continuity) layout(c *codec)          { c.fixed(&m.Indicators) }

// InformationRequest is the INR.
type InformationRequest struct {
	Circuit
	Indicators InformationRequestIndicators
	Optional   Optional
}

func (m *InformationRequest) MessageType() MessageType { return INR }
func (m *InformationRequest) layout(c *codec) {
	c.fixed(&m.Indicators)
	c.pointers(0, true)
	c.optional(&m.Optional)
}

// Information is the INF.
type Information struct {
	Circuit
	Indicators InformationIndicators
	Optional   Optional
}

func (m *Information) MessageType() MessageType { return INF }
func (m *Information) layout(c *codec) {
	c.fixed(&m.Indicators)
	c.pointers(0, true)
	c.optional(&m.Optional)
}

// Confusion is the CFN: the answer to a message that could not be understood.
type Confusion struct {
	Circuit
	Cause    CauseIndicators
	Optional Optional
}

func (m *Confusion) MessageType() MessageType { return CFN }
func (m *Confusion) layout(c *codec) {
	c.pointers(1, true)
	c.variable(&m.Cause)
	c.optional(&m.Optional)
}
