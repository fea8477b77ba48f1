package isup

// Generic is a message of a known type that has no typed struct here. Its format
// comes from a table (fixed part length, variable parameters, optional part); a
// format that is not well defined in public sources is kept whole in Body.
type Generic struct {
	Circuit
	Kind     MessageType
	Fixed    []byte   // the mandatory fixed part
	Variable [][]byte // values of the mandatory variable parameters, in order
	Optional Optional
	Body     []byte // the whole body, for opaque formats only
}

func (m *Generic) MessageType() MessageType { return m.Kind }
func (m *Generic) layout(c *codec) {
	f := genericFormats[m.Kind]
	if f == nil || f.opaque {
		c.rest(&m.Body)
		return
	}
	c.fixedRaw(0, int(f.fixed), &m.Fixed)
	if len(f.variable) == 0 && !f.optional {
		return
	}
	c.pointers(len(f.variable), f.optional)
	if c.mode == decoding && len(f.variable) > 0 {
		m.Variable = make([][]byte, len(f.variable))
	} else if len(m.Variable) != len(f.variable) {
		c.fail(0, c.off, valueError(0, ErrMissingMandatory, "%s needs %d variable parameters, has %d", m.Kind, len(f.variable), len(m.Variable)))
		return
	}
	for i, code := range f.variable {
		c.variableRaw(code, &m.Variable[i])
	}
	if f.optional {
		c.optional(&m.Optional)
	}
}

// Unknown is a message whose type code this codec does not know. Body is everything
// after the type octet, so it passes on byte-identical.
type Unknown struct {
	Circuit
	Kind MessageType
	Body []byte
}

func (m *Unknown) MessageType() MessageType { return m.Kind }
func (m *Unknown) layout(c *codec)          { c.rest(&m.Body) }

type format struct {
	fixed    uint8
	variable []ParameterCode
	optional bool
	opaque   bool
}

var (
	optionalOnly = &format{optional: true}
	opaque       = &format{opaque: true}
)

// genericFormats lists the formats of the message types without a typed struct
// (Q.763 §4, T1.113; call modification, facility deactivation/information, circuit
// validation, pass-along and charging formats differ between editions and networks,
// so they stay opaque).
var genericFormats = map[MessageType]*format{
	FOT: optionalOnly, DRS: optionalOnly, NRM: optionalOnly, FAC: optionalOnly,
	UPT: optionalOnly, UPA: optionalOnly, IDR: optionalOnly, IRS: optionalOnly,
	SGM: optionalOnly, LOP: optionalOnly, APM: optionalOnly, PRI: optionalOnly,
	SDN: optionalOnly, EXM: optionalOnly,
	FAR: {fixed: 1, optional: true},
	FAA: {fixed: 1, optional: true},
	FRJ: {fixed: 1, variable: []ParameterCode{ParamCauseIndicators}, optional: true},
	USR: {variable: []ParameterCode{ParamUserToUserInformation}, optional: true},
	CRM: {fixed: 1},                 // nature of connection indicators
	CVR: {fixed: 2, optional: true}, // CVR response indicator, circuit group characteristics
	CMR: opaque, CMC: opaque, CMRJ: opaque, FAD: opaque, FAI: opaque,
	CSVR: opaque, CSVS: opaque, PAM: opaque, CRG: opaque,
}

// newMessage returns an empty message of the type's struct.
func newMessage(t MessageType, v Variant) Message {
	switch t {
	case IAM:
		return &InitialAddress{}
	case SAM:
		return &SubsequentAddress{}
	case INR:
		return &InformationRequest{}
	case INF:
		return &Information{}
	case COT:
		return &Continuity{}
	case ACM:
		return &AddressComplete{}
	case CON:
		return &Connect{}
	case ANM:
		return &Answer{}
	case CPG:
		return &CallProgress{}
	case REL:
		return &Release{}
	case RLC:
		return &ReleaseComplete{}
	case SUS, RES:
		return &SuspendResume{Kind: t}
	case CFN:
		return &Confusion{}
	case BLO, UBL, BLA, UBA, RSC, CCR, LPA, UCIC, OLM:
		return &Simple{Kind: t}
	case CRA, CVT:
		if v == ANSI {
			return &Simple{Kind: t}
		}
	case GRS, GRA:
		return &GroupReset{Kind: t}
	case CGB, CGU, CGBA, CGUA:
		return &GroupSupervision{Kind: t}
	case CQM:
		return &CircuitQuery{}
	case CQR:
		return &CircuitQueryResponse{}
	}
	if _, ok := genericFormats[t]; ok && (v == ANSI || !ansiOnly(t)) {
		return &Generic{Kind: t}
	}
	return &Unknown{Kind: t}
}

// ansiOnly reports the codes that ITU does not define (0xE9-0xED).
func ansiOnly(t MessageType) bool { return t >= CRA && t <= EXM }
