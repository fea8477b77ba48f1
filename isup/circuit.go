package isup

// Circuit supervision messages.

// Simple is a message that is only a CIC and a type: BLO, UBL, BLA, UBA, RSC, CCR,
// LPA, UCIC, OLM, and ANSI's CRA and CVT.
type Simple struct {
	Circuit
	Kind MessageType
}

func (m *Simple) MessageType() MessageType { return m.Kind }
func (m *Simple) layout(c *codec)          {}

// GroupReset is the GRS (range only) or the GRA (range and status: bit set =
// circuit locally maintenance blocked).
type GroupReset struct {
	Circuit
	Kind           MessageType // GRS or GRA
	RangeAndStatus RangeAndStatus
}

func (m *GroupReset) MessageType() MessageType { return m.Kind }
func (m *GroupReset) layout(c *codec) {
	c.pointers(1, false)
	c.variable(&m.RangeAndStatus)
}

// GroupSupervision is CGB, CGU, CGBA or CGUA: the supervision type and a range
// whose status bits name the circuits acted on or acknowledged.
type GroupSupervision struct {
	Circuit
	Kind           MessageType // CGB, CGU, CGBA or CGUA
	Type           CircuitGroupSupervisionType
	RangeAndStatus RangeAndStatus
}

func (m *GroupSupervision) MessageType() MessageType { return m.Kind }
func (m *GroupSupervision) layout(c *codec) {
	c.fixed(&m.Type)
	c.pointers(1, false)
	c.variable(&m.RangeAndStatus)
}

// CircuitQuery is the CQM (range only).
type CircuitQuery struct {
	Circuit
	RangeAndStatus RangeAndStatus
}

func (m *CircuitQuery) MessageType() MessageType { return CQM }
func (m *CircuitQuery) layout(c *codec) {
	c.pointers(1, false)
	c.variable(&m.RangeAndStatus)
}

// CircuitQueryResponse is the CQR: the range and one state octet per circuit.
type CircuitQueryResponse struct {
	Circuit
	RangeAndStatus RangeAndStatus
	States         CircuitStateIndicator
}

func (m *CircuitQueryResponse) MessageType() MessageType { return CQR }
func (m *CircuitQueryResponse) layout(c *codec) {
	c.pointers(2, false)
	c.variable(&m.RangeAndStatus)
	c.variable(&m.States)
}
