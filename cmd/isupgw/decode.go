package main

import (
	"bufio"
	"cmp"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp/capture"
)

func decodeCommand() *cli.Command {
	return &cli.Command{
		Name:      "decode",
		Usage:     "decode ISUP from hex or from a pcap/pcapng capture of M3UA over SCTP",
		ArgsUsage: "[FILE | HEX ... | -]",
		Description: `Each argument is a capture file (pcap or pcapng: M3UA over SCTP, SCTP over UDP,
draft M3UA, MTP2/MTP3 link types) or, if no such file exists, one ISUP message in
hex starting with the CIC. With no argument or "-", hex messages are read from
standard input, one per line. One line is printed per ISUP message:
time, OPC>DPC, SLS, CIC, type and key parameters (captures); CIC, type and key
parameters (hex).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "variant", Value: "itu", Usage: "ISUP variant: itu or ansi"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object per message"},
			&cli.BoolFlag{Name: "hex", Usage: "treat every argument as hex, even if a file has that name"},
			&cli.UintFlag{Name: "udp-port", Value: 9899, Usage: "UDP port that carries SCTP (RFC 6951) in captures"},
		},
		Action: runDecode,
	}
}

type decoder struct {
	variant isup.Variant
	json    bool
	out     *bufio.Writer
	errOut  io.Writer
	msgs    int
	errs    int
}

func runDecode(c *cli.Context) error {
	v, err := isup.ParseVariant(c.String("variant"))
	if err != nil {
		return err
	}
	port := c.Uint("udp-port")
	if port == 0 || port > 65535 {
		return fmt.Errorf("--udp-port %d: want 1-65535", port)
	}
	d := &decoder{variant: v, json: c.Bool("json"), out: bufio.NewWriter(c.App.Writer), errOut: c.App.ErrWriter}
	defer d.out.Flush()

	args := c.Args().Slice()
	if len(args) == 0 {
		args = []string{"-"}
	}
	for _, a := range args {
		switch {
		case a == "-":
			err = d.hexLines(c.App.Reader)
		case !c.Bool("hex") && isFile(a):
			err = d.captureFile(a, uint16(port))
		default:
			err = d.hexArg(a)
		}
		if err != nil {
			return err
		}
	}
	if d.errs > 0 {
		d.out.Flush()
		return fmt.Errorf("decode: %d of %d messages could not be decoded", d.errs, d.msgs)
	}
	return nil
}

func isFile(name string) bool {
	st, err := os.Stat(name)
	return err == nil && st.Mode().IsRegular()
}

func (d *decoder) hexArg(s string) error {
	b, err := parseHex(s)
	if err != nil {
		return fmt.Errorf("%q is neither a file nor hex: %v", s, err)
	}
	d.message(b, nil)
	return nil
}

func (d *decoder) hexLines(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		b, err := parseHex(s)
		if err != nil {
			d.msgs++
			d.errs++
			fmt.Fprintf(d.errOut, "stdin line %d: %v\n", line, err)
			continue
		}
		d.message(b, nil)
	}
	return sc.Err()
}

// parseHex accepts "0100 01..." with spaces, colons or a 0x prefix.
func parseHex(s string) ([]byte, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	s = strings.NewReplacer(" ", "", ":", "", "\t", "").Replace(s)
	if s == "" {
		return nil, errors.New("empty")
	}
	return hex.DecodeString(s)
}

func (d *decoder) captureFile(path string, port uint16) error {
	r, err := capture.Open(path, capture.WithANSI(d.variant == isup.ANSI), capture.WithSCTPOverUDP(port))
	if err != nil {
		return err
	}
	defer r.Close()
	var seen captureTally
	for {
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			if seen.isup == 0 {
				seen.write(d.errOut, path, r.Stats())
				return fmt.Errorf("decode: %s: no ISUP messages", path)
			}
			return nil
		}
		var fe *capture.FrameError
		if errors.As(err, &fe) {
			d.errs++
			fmt.Fprintln(d.errOut, err)
			continue
		}
		if err != nil {
			return err
		}
		seen.add(&m)
		if !m.HasLabel || m.SI != 5 { // ISUP only
			continue
		}
		d.message(m.Payload, &m)
	}
}

// message decodes one ISUP message and prints it; meta is nil for hex input.
func (d *decoder) message(b []byte, meta *capture.Message) {
	d.msgs++
	m, err := isup.Decode(b, d.variant)
	if err != nil {
		d.errs++
		where := "message " + strconv.Itoa(d.msgs)
		if meta != nil {
			where = "frame " + strconv.Itoa(meta.Frame)
		}
		fmt.Fprintf(d.errOut, "%s: %v (% X)\n", where, err, b)
		return
	}
	if d.json {
		d.printJSON(m, b, meta)
	} else {
		d.printLine(m, meta)
	}
}

func (d *decoder) printLine(m isup.Message, meta *capture.Message) {
	if meta != nil {
		fmt.Fprintf(d.out, "%s %d>%d sls=%d ", meta.Time.UTC().Format("2006-01-02T15:04:05.000000Z"), meta.OPC, meta.DPC, meta.SLS)
	}
	fmt.Fprintf(d.out, "cic=%d %s", m.CircuitID(), m.MessageType())
	if s := isup.DescribeString(m); s != "" {
		fmt.Fprintf(d.out, " %s", s)
	}
	d.out.WriteByte('\n')
}

// jsonMessage is the --json form. Fields keeps Describe's order.
type jsonMessage struct {
	Frame    int             `json:"frame,omitempty"`
	Time     *time.Time      `json:"time,omitempty"`
	OPC      *uint32         `json:"opc,omitempty"`
	DPC      *uint32         `json:"dpc,omitempty"`
	NI       *uint8          `json:"ni,omitempty"`
	SLS      *uint8          `json:"sls,omitempty"`
	CIC      uint16          `json:"cic"`
	Type     string          `json:"type"`
	Code     uint8           `json:"code"`
	Fields   json.RawMessage `json:"fields"`
	Optional []jsonParam     `json:"optional,omitempty"`
	Hex      string          `json:"hex"`
}

type jsonParam struct {
	Code  uint8  `json:"code"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

func (d *decoder) printJSON(m isup.Message, b []byte, meta *capture.Message) {
	jm := jsonMessage{CIC: m.CircuitID(), Type: m.MessageType().String(), Code: uint8(m.MessageType()),
		Fields: orderedFields(isup.Describe(m)), Hex: hex.EncodeToString(b)}
	if meta != nil {
		t := meta.Time.UTC()
		jm.Frame, jm.Time = meta.Frame, &t
		jm.OPC, jm.DPC, jm.NI, jm.SLS = &meta.OPC, &meta.DPC, &meta.NI, &meta.SLS
	}
	if o := isup.OptionalOf(m); o != nil {
		for _, p := range *o {
			jm.Optional = append(jm.Optional, jsonParam{Code: uint8(p.Code), Name: p.Code.String(), Value: hex.EncodeToString(p.Value)})
		}
	}
	line, _ := json.Marshal(jm) // cannot fail: plain types only
	d.out.Write(line)
	d.out.WriteByte('\n')
}

func orderedFields(fs []isup.Field) json.RawMessage {
	var sb strings.Builder
	sb.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			sb.WriteByte(',')
		}
		k, _ := json.Marshal(f.Name)
		v, _ := json.Marshal(f.Value)
		sb.Write(k)
		sb.WriteByte(':')
		sb.Write(v)
	}
	sb.WriteByte('}')
	return json.RawMessage(sb.String())
}

// captureTally counts what a capture carried, to say what it holds when it
// holds no ISUP (a BICC or SCCP capture decodes to nothing).
type captureTally struct {
	isup     int
	framings map[capture.Framing]int
	si       map[uint8]int  // MTP3 user parts by service indicator
	classes  map[string]int // M3UA messages without a routing label, by class
}

func (t *captureTally) add(m *capture.Message) {
	if t.framings == nil {
		t.framings, t.si, t.classes = map[capture.Framing]int{}, map[uint8]int{}, map[string]int{}
	}
	t.framings[m.Framing]++
	switch {
	case m.HasLabel:
		t.si[m.SI]++
		if m.SI == 5 {
			t.isup++
		}
	case m.Framing == capture.FramingM3UA || m.Framing == capture.FramingM3UADraft:
		t.classes[m3uaClass(m.Class)]++
	}
}

func (t *captureTally) write(w io.Writer, path string, st capture.Stats) {
	fmt.Fprintf(w, "%s: no ISUP messages (service indicator 5) in %d frames; it holds:\n", path, st.Frames)
	if len(t.framings) == 0 {
		fmt.Fprintln(w, "  no M3UA, MTP2 or MTP3 messages")
	}
	for _, f := range sortedKeys(t.framings) {
		fmt.Fprintf(w, "  %s: %s\n", f, messages(t.framings[f]))
	}
	for _, si := range sortedKeys(t.si) {
		fmt.Fprintf(w, "  service indicator %d (%s): %s\n", si, serviceIndicator(si), messages(t.si[si]))
	}
	for _, c := range sortedKeys(t.classes) {
		fmt.Fprintf(w, "  M3UA %s: %s\n", c, messages(t.classes[c]))
	}
	for _, o := range []struct {
		n    int
		what string
	}{
		{st.NonM3UA, "SCTP messages of another payload protocol (not M3UA)"},
		{st.Skipped, "frames without SCTP or MTP content"},
		{st.IPFragments, "IP fragments (not reassembled)"},
		{st.BadCRC, "SCTP packets with a bad checksum"},
		{st.MTP2NonMSU, "MTP2 FISUs and LSSUs"},
		{st.Errors, "frames that could not be decoded"},
	} {
		if o.n > 0 {
			fmt.Fprintf(w, "  %s: %d\n", o.what, o.n)
		}
	}
}

func messages(n int) string {
	if n == 1 {
		return "1 message"
	}
	return strconv.Itoa(n) + " messages"
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// serviceIndicator names an MTP3 user part (Q.704 section 14.2.1, the
// service indicator codes; 2 is "signalling network testing and maintenance
// special messages" in T1.111).
func serviceIndicator(si uint8) string {
	switch si {
	case 0:
		return "signalling network management"
	case 1:
		return "signalling network testing and maintenance"
	case 2:
		return "special network testing (ANSI) / spare"
	case 3:
		return "SCCP"
	case 4:
		return "TUP"
	case 5:
		return "ISUP"
	case 6:
		return "DUP call and circuit"
	case 7:
		return "DUP facility registration"
	case 8:
		return "MTP testing user part"
	case 9:
		return "broadband ISUP"
	case 10:
		return "satellite ISUP"
	case 12:
		return "AAL type 2 signalling"
	case 13:
		return "BICC"
	case 14:
		return "gateway control protocol"
	}
	return "spare"
}

// m3uaClass names an M3UA message class (RFC 4666 section 3.1.2).
func m3uaClass(c uint8) string {
	switch c {
	case 0:
		return "management (MGMT)"
	case 1:
		return "transfer (DATA without a routing label)"
	case 2:
		return "SS7 signalling network management (SSNM)"
	case 3:
		return "ASP state maintenance (ASPSM)"
	case 4:
		return "ASP traffic maintenance (ASPTM)"
	case 9:
		return "routing key management (RKM)"
	}
	return fmt.Sprintf("class %d", c)
}
