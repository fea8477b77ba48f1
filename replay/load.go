package replay

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp/capture"
)

// Msg is one ISUP message found in a capture.
type Msg struct {
	Index    int // position among the capture's ISUP messages, from 0
	Frame    int // 1-based frame number in the file
	Time     time.Time
	OPC, DPC uint32
	NI, SLS  uint8
	CIC      uint16
	Type     isup.MessageType
	// Msg is the decoded message; nil when Err is set (CIC and Type then come
	// from the header alone, if it was long enough).
	Msg isup.Message
	Err error
	Raw []byte // the ISUP message, CIC first
}

// Capture is the ISUP content of one file.
type Capture struct {
	File  string
	Msgs  []Msg
	Stats capture.Stats
	// FrameErrors are the frames the Reader could not decode (a malformed
	// SCTP chunk, an unsupported link type in pcapng); reading went on.
	FrameErrors []error
	// Other counts MTP3 user messages that are not ISUP (SCCP, BICC, ...).
	Other int
}

// Options configure Load.
type Options struct {
	Variant isup.Variant // ITU (default) or ANSI
	UDPPort uint16       // UDP port that carries SCTP; 0 means 9899
	// Progress, if set, is called now and then with the bytes read so far
	// and the file size.
	Progress func(done, total int64)
}

// Load reads a capture file. A file that cannot be read to the end (wrong
// magic, unsupported link type, a record cut short) gives an error naming
// the file and, where there is one, the frame; the messages read before it
// are returned with it.
func Load(path string, o Options) (*Capture, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var total int64
	if st, err := f.Stat(); err == nil {
		total = st.Size()
	}
	var rd io.Reader = f
	if o.Progress != nil {
		rd = &countingReader{r: f, total: total, report: o.Progress}
	}
	return Read(rd, path, o)
}

// Read reads a capture from r; name is used in errors and in the summary.
func Read(r io.Reader, name string, o Options) (*Capture, error) {
	port := o.UDPPort
	if port == 0 {
		port = capture.DefaultSCTPOverUDPPort
	}
	cr, err := capture.NewReader(r, capture.WithFileName(name), capture.WithANSI(o.Variant == isup.ANSI),
		capture.WithSCTPOverUDP(port))
	if err != nil {
		return nil, err
	}
	c := &Capture{File: name}
	for {
		m, err := cr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var fe *capture.FrameError
		if errors.As(err, &fe) {
			c.FrameErrors = append(c.FrameErrors, err)
			continue
		}
		if err != nil {
			c.Stats = cr.Stats()
			return c, err
		}
		if !m.HasLabel {
			continue
		}
		if m.SI != 5 {
			c.Other++
			continue
		}
		c.Msgs = append(c.Msgs, decodeMsg(len(c.Msgs), &m, o.Variant))
	}
	c.Stats = cr.Stats()
	return c, nil
}

func decodeMsg(i int, m *capture.Message, v isup.Variant) Msg {
	x := Msg{Index: i, Frame: m.Frame, Time: m.Time, OPC: m.OPC, DPC: m.DPC, NI: m.NI, SLS: m.SLS, Raw: m.Payload}
	if cic, t, err := isup.Peek(m.Payload, v); err == nil {
		x.CIC, x.Type = cic, t
	}
	d, err := isup.Decode(m.Payload, v)
	if err != nil {
		x.Err = err
		return x
	}
	x.Msg = d
	return x
}

// countingReader reports progress at most once per 64 KiB read.
type countingReader struct {
	r        io.Reader
	n, last  int64
	total    int64
	report   func(done, total int64)
	finished bool
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n-c.last >= 64<<10 || (err != nil && !c.finished) {
		c.last = c.n
		c.finished = err != nil
		c.report(c.n, c.total)
	}
	return n, err
}

// String is a short description for logs and errors.
func (m *Msg) String() string {
	return fmt.Sprintf("frame %d %d>%d cic=%d %s", m.Frame, m.OPC, m.DPC, m.CIC, m.Type)
}
