package isup

// Param is a typed parameter: it knows its code and how to move its value (the
// octets after the length, or the whole field for a mandatory fixed parameter) to
// and from the wire. Pointers to the typed parameters of this package implement it.
type Param interface {
	ParamEncoder
	UnmarshalBinary(b []byte) error
}

// ParamEncoder is the encoding half of Param; the typed parameter values implement it,
// so Optional.Set takes either a value or a pointer.
type ParamEncoder interface {
	Code() ParameterCode
	MarshalLen() int
	// MarshalTo writes the value into b, which has at least MarshalLen octets, and
	// returns the number of octets written.
	MarshalTo(b []byte) (int, error)
}

// Parameter is an optional parameter as carried on the wire. Value aliases the
// decoded message buffer.
type Parameter struct {
	Code  ParameterCode
	Value []byte
}

// Optional is the optional part of a message, in wire order. Unknown parameters stay
// here untouched so that a message can be passed on byte-identical. A nil Optional
// encodes as "no optional part" (pointer 0); a non-nil empty one as an optional part
// holding only the end-of-optional-parameters octet.
type Optional []Parameter

// Find returns the first parameter with the code.
func (o Optional) Find(code ParameterCode) (Parameter, bool) {
	for _, p := range o {
		if p.Code == code {
			return p, true
		}
	}
	return Parameter{}, false
}

// Has reports whether a parameter with the code is present.
func (o Optional) Has(code ParameterCode) bool {
	_, ok := o.Find(code)
	return ok
}

// Decode finds the parameter with p's code and unmarshals it into p. It reports
// false (and no error) when the parameter is absent.
func (o Optional) Decode(p Param) (bool, error) {
	raw, ok := o.Find(p.Code())
	if !ok {
		return false, nil
	}
	return true, p.UnmarshalBinary(raw.Value)
}

// Set encodes p and replaces the parameter with the same code, or appends it.
func (o *Optional) Set(p ParamEncoder) error {
	n := p.MarshalLen()
	if n > 255 {
		return &Error{Param: p.Code(), Offset: -1, Err: ErrTooLong}
	}
	v := make([]byte, n)
	if _, err := p.MarshalTo(v); err != nil {
		return err
	}
	o.SetRaw(p.Code(), v)
	return nil
}

// SetRaw replaces the parameter with the code, or appends it, with a raw value.
func (o *Optional) SetRaw(code ParameterCode, value []byte) {
	for i := range *o {
		if (*o)[i].Code == code {
			(*o)[i].Value = value
			return
		}
	}
	*o = append(*o, Parameter{Code: code, Value: value})
}

// Remove deletes every parameter with the code and reports whether one was there.
func (o *Optional) Remove(code ParameterCode) bool {
	kept := (*o)[:0]
	for _, p := range *o {
		if p.Code != code {
			kept = append(kept, p)
		}
	}
	removed := len(kept) != len(*o)
	*o = kept
	return removed
}

// Raw is an opaque parameter value: used for the mandatory parts of messages whose
// parameters have no typed form, and for parameters passed on unexamined.
type Raw struct {
	Kind  ParameterCode
	Value []byte
}

func (r Raw) Code() ParameterCode { return r.Kind }
func (r Raw) MarshalLen() int     { return len(r.Value) }
func (r Raw) MarshalTo(b []byte) (int, error) {
	return copy(b, r.Value), nil
}
func (r *Raw) UnmarshalBinary(b []byte) error {
	r.Value = b
	return nil
}
