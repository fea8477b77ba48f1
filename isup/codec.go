package isup

import "sync"

// The codec walks a message's layout once per operation. Each message type describes
// its layout in a single method (fixed parameters, pointer count, variable parameters,
// optional part), and that one description serves decoding, sizing and encoding, so
// the three can never disagree.

type mode uint8

const (
	decoding mode = iota
	sizing
	encoding
)

type codec struct {
	mode    mode
	variant Variant
	msg     MessageType
	buf     []byte // the whole message, from the CIC (nil when sizing)
	off     int    // decoding: next fixed octet; sizing/encoding: next free octet
	ptr     int    // offset of the next unused pointer octet
	err     error
}

// fail records the first error; later steps become no-ops.
func (c *codec) fail(code ParameterCode, off int, err error) {
	if c.err != nil {
		return
	}
	if e, ok := err.(*Error); ok {
		if e.Type == 0 {
			e.Type = c.msg
		}
		if e.Offset < 0 {
			e.Offset = off
		}
		c.err = e
		return
	}
	c.err = &Error{Type: c.msg, Param: code, Offset: off, Err: err}
}

// room checks, when encoding, that n more octets fit into the caller's buffer.
func (c *codec) room(n int) bool {
	if c.off+n > len(c.buf) {
		c.fail(0, len(c.buf), ErrShortBuffer)
		return false
	}
	return true
}

// codecs recycles codec state: a codec reaches the message's layout method through
// an interface call, so it would otherwise escape to the heap on every message.
var codecs = sync.Pool{New: func() any { return new(codec) }}

func getCodec(md mode, v Variant, t MessageType, buf []byte) *codec {
	c := codecs.Get().(*codec)
	*c = codec{mode: md, variant: v, msg: t, buf: buf, off: headerLen}
	return c
}

func putCodec(c *codec) {
	c.buf = nil
	codecs.Put(c)
}

// fixed handles a mandatory fixed parameter of the typed parameter's own length.
func (c *codec) fixed(p Param) {
	if c.err != nil {
		return
	}
	n := p.MarshalLen()
	switch c.mode {
	case decoding:
		if c.off+n > len(c.buf) {
			c.fail(p.Code(), c.off, ErrTruncated)
			return
		}
		if err := p.UnmarshalBinary(c.buf[c.off : c.off+n]); err != nil {
			c.fail(p.Code(), c.off, err)
			return
		}
	case encoding:
		if !c.room(n) {
			return
		}
		if _, err := p.MarshalTo(c.buf[c.off : c.off+n]); err != nil {
			c.fail(p.Code(), c.off, err)
			return
		}
	}
	c.off += n
}

// fixedRaw handles a mandatory fixed field of n octets that has no typed form.
func (c *codec) fixedRaw(code ParameterCode, n int, v *[]byte) {
	if c.err != nil {
		return
	}
	switch c.mode {
	case decoding:
		if c.off+n > len(c.buf) {
			c.fail(code, c.off, ErrTruncated)
			return
		}
		if n > 0 {
			*v = c.buf[c.off : c.off+n : c.off+n]
		}
	case encoding, sizing:
		if len(*v) != n {
			c.fail(code, c.off, lengthError(code, len(*v), itoa(n)))
			return
		}
		if c.mode == encoding {
			if !c.room(n) {
				return
			}
			copy(c.buf[c.off:], *v)
		}
	}
	c.off += n
}

// pointers opens the pointer area: one octet per mandatory variable parameter and
// one for the optional part when the message type has one.
func (c *codec) pointers(n int, optional bool) {
	if c.err != nil {
		return
	}
	if optional {
		n++
	}
	c.ptr = c.off
	switch c.mode {
	case decoding:
		if c.off+n > len(c.buf) {
			c.fail(0, c.off, ErrTruncated)
			return
		}
	case encoding:
		if !c.room(n) {
			return
		}
		clear(c.buf[c.off : c.off+n])
	}
	c.off += n
}

// target follows the pointer at c.ptr and returns the offset it points to.
func (c *codec) target(code ParameterCode) (int, bool) {
	pv := int(c.buf[c.ptr])
	at := c.ptr + pv
	if at >= len(c.buf) {
		c.fail(code, c.ptr, ErrPointer)
		return 0, false
	}
	return at, true
}

// variable handles a mandatory variable parameter (pointer, length, value).
func (c *codec) variable(p Param) {
	if c.err != nil {
		return
	}
	switch c.mode {
	case decoding:
		if c.buf[c.ptr] == 0 {
			c.fail(p.Code(), c.ptr, ErrMissingMandatory)
			return
		}
		v, ok := c.lengthValue(p.Code())
		if !ok {
			return
		}
		if err := p.UnmarshalBinary(v); err != nil {
			c.fail(p.Code(), c.ptr, err)
			return
		}
	default:
		c.put(p.Code(), p.MarshalLen(), p)
	}
	c.ptr++
}

// variableRaw is variable for parameters that have no typed form.
func (c *codec) variableRaw(code ParameterCode, v *[]byte) {
	if c.err != nil {
		return
	}
	switch c.mode {
	case decoding:
		if c.buf[c.ptr] == 0 {
			c.fail(code, c.ptr, ErrMissingMandatory)
			return
		}
		val, ok := c.lengthValue(code)
		if !ok {
			return
		}
		*v = val
	default:
		c.put(code, len(*v), Raw{Kind: code, Value: *v})
	}
	c.ptr++
}

// lengthValue reads the length-prefixed value the current pointer designates.
func (c *codec) lengthValue(code ParameterCode) ([]byte, bool) {
	at, ok := c.target(code)
	if !ok {
		return nil, false
	}
	end := at + 1 + int(c.buf[at])
	if end > len(c.buf) {
		c.fail(code, at, ErrLength)
		return nil, false
	}
	return c.buf[at+1 : end : end], true
}

// put appends a length-prefixed value at c.off and points the current pointer at it.
func (c *codec) put(code ParameterCode, n int, p ParamEncoder) {
	if n > 255 {
		c.fail(code, c.off, ErrTooLong)
		return
	}
	pv := c.off - c.ptr
	if pv > 255 {
		c.fail(code, c.ptr, ErrPointer)
		return
	}
	if c.mode == encoding {
		if !c.room(1 + n) {
			return
		}
		c.buf[c.ptr] = byte(pv)
		c.buf[c.off] = byte(n)
		if _, err := p.MarshalTo(c.buf[c.off+1 : c.off+1+n]); err != nil {
			c.fail(code, c.off, err)
			return
		}
	}
	c.off += 1 + n
}

// optional handles the optional part, whose pointer is the last of the area.
func (c *codec) optional(o *Optional) {
	if c.err != nil {
		return
	}
	switch c.mode {
	case decoding:
		c.decodeOptional(o)
	default:
		c.encodeOptional(*o)
	}
	c.ptr++
}

func (c *codec) decodeOptional(o *Optional) {
	if c.buf[c.ptr] == 0 {
		*o = nil
		return
	}
	start, ok := c.target(0)
	if !ok {
		return
	}
	// Two passes: count, then fill, so the part costs one allocation.
	n, at := 0, start
	for at < len(c.buf) && c.buf[at] != 0 {
		if at+2 > len(c.buf) {
			c.fail(ParameterCode(c.buf[at]), at, ErrTruncated)
			return
		}
		end := at + 2 + int(c.buf[at+1])
		if end > len(c.buf) {
			c.fail(ParameterCode(c.buf[at]), at, ErrLength)
			return
		}
		n++
		at = end
	}
	// A missing end-of-optional octet at the very end is tolerated: some equipment
	// omits it, and nothing is lost by accepting.
	params := make(Optional, n)
	at = start
	for i := range params {
		l := int(c.buf[at+1])
		params[i] = Parameter{Code: ParameterCode(c.buf[at]), Value: c.buf[at+2 : at+2+l : at+2+l]}
		at += 2 + l
	}
	*o = params
}

func (c *codec) encodeOptional(o Optional) {
	if o == nil {
		return // pointer stays 0
	}
	pv := c.off - c.ptr
	if pv > 255 {
		c.fail(0, c.ptr, ErrPointer)
		return
	}
	if c.mode == encoding {
		c.buf[c.ptr] = byte(pv)
	}
	for _, p := range o {
		if p.Code == ParamEndOfOptional {
			c.fail(p.Code, c.off, ErrInvalidValue)
			return
		}
		if len(p.Value) > 255 {
			c.fail(p.Code, c.off, ErrTooLong)
			return
		}
		if c.mode == encoding {
			if !c.room(2 + len(p.Value)) {
				return
			}
			c.buf[c.off] = byte(p.Code)
			c.buf[c.off+1] = byte(len(p.Value))
			copy(c.buf[c.off+2:], p.Value)
		}
		c.off += 2 + len(p.Value)
	}
	if c.mode == encoding {
		if !c.room(1) {
			return
		}
		c.buf[c.off] = 0
	}
	c.off++
}

// rest takes every remaining octet as an opaque body (unknown or unparsed formats).
func (c *codec) rest(v *[]byte) {
	if c.err != nil {
		return
	}
	switch c.mode {
	case decoding:
		*v = c.buf[c.off:len(c.buf):len(c.buf)]
		c.off = len(c.buf)
	case encoding:
		if !c.room(len(*v)) {
			return
		}
		copy(c.buf[c.off:], *v)
		c.off += len(*v)
	case sizing:
		c.off += len(*v)
	}
}

// itoa avoids strconv in the hot path's error constructor call sites.
func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
