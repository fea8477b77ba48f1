package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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
	for {
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
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
