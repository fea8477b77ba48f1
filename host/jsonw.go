package host

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// jw appends one JSON object to a byte slice, field by field. The gateway's
// messages to hosts are built with it rather than encoding/json: it does no
// reflection and allocates only the line itself (see BenchmarkEncode). Keys are
// constants of this package and are written as they are; values are escaped.
type jw struct{ b []byte }

// newObj starts an object with its "type".
func newObj(typ string, sizeHint int) jw {
	w := jw{b: make([]byte, 0, sizeHint)}
	w.b = append(w.b, `{"type":`...)
	w.b = appendJSONString(w.b, typ)
	return w
}

func (w *jw) key(k string) {
	w.b = append(w.b, ',', '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

func (w *jw) str(k, v string) {
	w.key(k)
	w.b = appendJSONString(w.b, v)
}

func (w *jw) uint(k string, v uint64) {
	w.key(k)
	w.b = strconv.AppendUint(w.b, v, 10)
}

func (w *jw) int(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *jw) bool(k string, v bool) {
	w.key(k)
	w.b = strconv.AppendBool(w.b, v)
}

// any writes a value through encoding/json (maps of alarm and status data).
func (w *jw) any(k string, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		raw, _ = json.Marshal(err.Error())
	}
	w.key(k)
	w.b = append(w.b, raw...)
}

// end closes the object and adds the newline that ends the line.
func (w *jw) end() []byte {
	w.b = append(w.b, '}', '\n')
	return w.b
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Control characters are escaped,
// and so are U+2028 and U+2029; invalid UTF-8 becomes U+FFFD, as encoding/json
// does, so every line is valid JSON whatever text it carries.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
