package interop

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// vtyPrompt ends every answer of osmo-stp's VTY (view node).
const vtyPrompt = "OsmoSTP> "

// vtyRun opens a VTY session, runs one command and returns its output
// (the text between the echoed command and the next prompt).
func vtyRun(addr, command string, timeout time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	var buf []byte
	readPrompt := func() (string, error) {
		chunk := make([]byte, 4096)
		for range 1000 {
			if text := stripTelnet(buf); strings.HasSuffix(text, vtyPrompt) {
				buf = buf[:0]
				return text, nil
			}
			n, err := c.Read(chunk)
			buf = append(buf, chunk[:n]...)
			if err != nil {
				return "", fmt.Errorf("vty: %w after %q", err, stripTelnet(buf))
			}
		}
		return "", errors.New("vty: no prompt")
	}
	if _, err := readPrompt(); err != nil {
		return "", err
	}
	if _, err := c.Write([]byte(command + "\n")); err != nil {
		return "", err
	}
	text, err := readPrompt()
	if err != nil {
		return "", err
	}
	text = strings.ReplaceAll(text, "\r", "")
	text = strings.TrimSuffix(text, vtyPrompt)
	if i := strings.Index(text, command); i >= 0 { // the echo
		text = text[i+len(command):]
	}
	return strings.Trim(text, "\n"), nil
}

// stripTelnet drops telnet IAC sequences (RFC 854) from VTY output.
func stripTelnet(b []byte) string {
	const iac, sb, se = 255, 250, 240
	var out bytes.Buffer
	for i := 0; i < len(b); i++ {
		if b[i] != iac {
			out.WriteByte(b[i])
			continue
		}
		if i+1 >= len(b) {
			break
		}
		switch cmd := b[i+1]; {
		case cmd == iac:
			out.WriteByte(iac)
			i++
		case cmd == sb:
			j := bytes.Index(b[i:], []byte{iac, se})
			if j < 0 {
				return out.String()
			}
			i += j + 1
		case cmd >= 251: // WILL, WONT, DO, DONT + option
			i += 2
		default:
			i++
		}
	}
	return out.String()
}

// ASPRow is one line of `show cs7 instance 0 asp`.
type ASPRow struct {
	Name, AS, State, Type, Remote string
}

// ASRow is one line of `show cs7 instance 0 as all`.
type ASRow struct {
	Name, State, RC, DPC string
}

// parseTable splits a VTY table into rows of whitespace-separated fields.
// The header must hold the given column titles in that order (osmo-stp has
// changed its columns between releases; a silent misparse would let a test
// pass on the wrong field).
func parseTable(out string, columns ...string) ([][]string, error) {
	lines := strings.Split(out, "\n")
	dash := -1
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "----") {
			dash = i
			break
		}
	}
	if dash < 1 {
		return nil, fmt.Errorf("no table header in %q", out)
	}
	header := strings.Join(lines[:dash], " ")
	at := 0
	for _, c := range columns {
		i := strings.Index(header[at:], c)
		if i < 0 {
			return nil, fmt.Errorf("header %q lacks column %q after offset %d", header, c, at)
		}
		at += i + len(c)
	}
	var rows [][]string
	for _, l := range lines[dash+1:] {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(l, "OsmoSTP") {
			continue
		}
		if len(f) < len(columns) {
			return nil, fmt.Errorf("short row %q (want %d columns)", l, len(columns))
		}
		rows = append(rows, f)
	}
	return rows, nil
}

func parseASPs(out string) (map[string]ASPRow, error) {
	rows, err := parseTable(out, "ASP Name", "AS Name", "State", "Type", "Remote")
	if err != nil {
		return nil, err
	}
	m := map[string]ASPRow{}
	for _, f := range rows {
		m[f[0]] = ASPRow{Name: f[0], AS: f[1], State: f[2], Type: f[3], Remote: f[4]}
	}
	return m, nil
}

func parseASes(out string) (map[string]ASRow, error) {
	rows, err := parseTable(out, "AS Name", "State", "Context", "Dpc")
	if err != nil {
		return nil, err
	}
	m := map[string]ASRow{}
	for _, f := range rows {
		m[f[0]] = ASRow{Name: f[0], State: f[1], RC: f[2], DPC: f[3]}
	}
	return m, nil
}

// showASPs asks osmo-stp for its ASPs.
func (l *Lab) showASPs() (map[string]ASPRow, string, error) {
	out, err := vtyRun(l.VTY(), "show cs7 instance 0 asp", 5*time.Second)
	if err != nil {
		return nil, "", err
	}
	m, err := parseASPs(out)
	return m, out, err
}

// showASes asks osmo-stp for its ASes.
func (l *Lab) showASes() (map[string]ASRow, string, error) {
	out, err := vtyRun(l.VTY(), "show cs7 instance 0 as all", 5*time.Second)
	if err != nil {
		return nil, "", err
	}
	m, err := parseASes(out)
	return m, out, err
}

// TestParseVTY reads osmo-stp 1.6.0's own output, captured in the lab.
func TestParseVTY(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	asps, err := parseASPs(read("show-asp-active.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// osmo-stp 1.6.0 leaves the AS column at "?".
	want := map[string]ASPRow{
		"asp-a": {Name: "asp-a", AS: "?", State: "ASP_ACTIVE", Type: "m3ua", Remote: "10.231.0.1:2911"},
		"asp-b": {Name: "asp-b", AS: "?", State: "ASP_ACTIVE", Type: "m3ua", Remote: "10.231.0.1:2912"},
	}
	if fmt.Sprint(asps) != fmt.Sprint(want) {
		t.Errorf("active ASPs:\n got %v\nwant %v", asps, want)
	}
	asps, err = parseASPs(read("show-asp-down.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if asps["asp-a"].State != "ASP_DOWN" || asps["asp-b"].AS != "?" || len(asps) != 2 {
		t.Errorf("down ASPs: %v", asps)
	}
	ases, err := parseASes(read("show-as-active.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := ases["as-a"], ases["as-b"]; a.State != "AS_ACTIVE" || a.RC != "1" || a.DPC != "1" ||
		b.State != "AS_ACTIVE" || b.RC != "2" || b.DPC != "2" {
		t.Errorf("ASes: %v", ases)
	}
	if _, err := parseASPs("OsmoSTP> \n% Unknown command.\n"); err == nil {
		t.Error("an error message parsed as a table")
	}
	// A header whose columns moved must not parse.
	if _, err := parseASPs("State ASP Name AS Name Type Remote\n----- ----\nx y z w v\n"); err == nil {
		t.Error("reordered header accepted")
	}
	if got := stripTelnet([]byte("\xff\xfb\x01a\xff\xfa\x18\x01\xff\xf0b\xff\xffc")); got != "ab\xffc" {
		t.Errorf("stripTelnet: %q", got)
	}
}
