package capture

import (
	"fmt"
	"testing"
)

// TestSampleCapturesAgainstTshark reads the public sample captures and
// compares every M3UA message (class and type per frame) and every DATA
// routing label (OPC, DPC, SI, SLS) with what tshark decodes.
func TestSampleCapturesAgainstTshark(t *testing.T) {
	const draft6 = "m3ua.version:Internet Draft version 6"
	cases := []struct {
		file      string
		prefs     []string
		label     []string // tshark fields for OPC, DPC, SI, SLS
		wantDraft bool
		minData   int
	}{
		{"m3ua_isup.cap", nil, []string{"m3ua.protocol_data_opc", "m3ua.protocol_data_dpc", "m3ua.protocol_data_si", "m3ua.protocol_data_sls"}, false, 300},
		{"centile_m3ua.cap", nil, []string{"m3ua.protocol_data_opc", "m3ua.protocol_data_dpc", "m3ua.protocol_data_si", "m3ua.protocol_data_sls"}, false, 1},
		{"isup.cap", []string{draft6}, []string{"mtp3.opc", "mtp3.dpc", "mtp3.service_indicator", "mtp3.sls"}, true, 6},
		{"bicc.pcap", nil, []string{"m3ua.protocol_data_opc", "m3ua.protocol_data_dpc", "m3ua.protocol_data_si", "m3ua.protocol_data_sls"}, false, 1},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := sampleCapture(t, c.file)
			fields := append([]string{"frame.number", "m3ua.message_class", "m3ua.message_type"}, c.label...)
			rows := tsharkFields(t, path, c.prefs, fields...)
			// Checksums: tshark's CRC-32c verdicts must match BadCRC+Adler32.
			crcBad := 0
			for _, row := range tsharkFields(t, path, []string{"sctp.checksum:CRC 32c"}, "sctp.checksum.status") {
				if row[0] == "0" {
					crcBad++
				}
			}

			var wantAll, wantData []string
			for _, row := range rows {
				for len(row) < len(fields) {
					row = append(row, "")
				}
				classes, types := splitList(row[1]), splitList(row[2])
				if len(classes) != len(types) {
					t.Fatalf("tshark frame %s: %d classes, %d types", row[0], len(classes), len(types))
				}
				for i := range classes {
					wantAll = append(wantAll, fmt.Sprintf("%s %s/%s", row[0], classes[i], types[i]))
				}
				opc, dpc, si, sls := splitList(row[3]), splitList(row[4]), splitList(row[5]), splitList(row[6])
				for i := range opc {
					wantData = append(wantData, fmt.Sprintf("%s opc=%d dpc=%d si=%d sls=%d",
						row[0], atou(t, opc[i]), atou(t, dpc[i]), atou(t, si[i]), atou(t, sls[i])))
				}
			}

			msgs, st := openAll(t, path)
			var gotAll, gotData []string
			for _, m := range msgs {
				gotAll = append(gotAll, fmt.Sprintf("%d %d/%d", m.Frame, m.Class, m.Type))
				if m.Class == ClassTransfer && m.Type == TypeData {
					if !m.HasLabel {
						t.Errorf("frame %d: DATA without label", m.Frame)
					}
					if (m.Framing == FramingM3UADraft) != c.wantDraft {
						t.Errorf("frame %d: framing %v", m.Frame, m.Framing)
					}
					gotData = append(gotData, fmt.Sprintf("%d opc=%d dpc=%d si=%d sls=%d", m.Frame, m.OPC, m.DPC, m.SI, m.SLS))
				}
			}
			compareLists(t, "M3UA messages", gotAll, wantAll)
			compareLists(t, "DATA labels", gotData, wantData)
			if len(gotData) < c.minData {
				t.Errorf("%d DATA messages, want at least %d", len(gotData), c.minData)
			}
			if st.BadCRC+st.Adler32 != crcBad {
				t.Errorf("BadCRC %d + Adler32 %d, tshark finds %d bad CRC-32c", st.BadCRC, st.Adler32, crcBad)
			}
			if st.Errors != 0 {
				t.Errorf("stats: %+v", st)
			}
			t.Logf("%d messages, %d DATA; stats %+v", len(gotAll), len(gotData), st)
		})
	}
}

func compareLists(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %d, tshark %d", what, len(got), len(want))
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i] != want[i] {
			t.Errorf("%s #%d: got %q, tshark %q", what, i, got[i], want[i])
			return
		}
	}
}

// TestM2PACaptureAgainstTshark reads the M2PA sample (another stack's link,
// RFC 4165 over kernel SCTP) and compares every MSU's routing label, frame by
// frame, with tshark's MTP3 decode; Link Status messages and empty User Data
// (acknowledgements) are counted, not returned, and tshark must see as many.
func TestM2PACaptureAgainstTshark(t *testing.T) {
	path := sampleCapture(t, "m2pa_isup_itu.pcap")
	var want []string
	nonMSU := 0
	for _, row := range tsharkFields(t, path, nil, "frame.number", "m2pa.type", "mtp3.opc", "mtp3.dpc", "mtp3.service_indicator", "mtp3.sls", "m2pa.length") {
		for len(row) < 7 {
			row = append(row, "")
		}
		types, lens := splitList(row[1]), splitList(row[6])
		opc, dpc, si, sls := splitList(row[2]), splitList(row[3]), splitList(row[4]), splitList(row[5])
		for i := range types {
			if types[i] != "1" || lens[i] == "16" {
				nonMSU++
			}
		}
		for i := range opc {
			want = append(want, fmt.Sprintf("%s opc=%d dpc=%d si=%d sls=%d", row[0], atou(t, opc[i]), atou(t, dpc[i]), atou(t, si[i]), atou(t, sls[i])))
		}
	}
	msgs, st := openAll(t, path)
	var got []string
	for _, m := range msgs {
		if m.Framing != FramingM2PA || !m.HasLabel || len(m.MSU) == 0 {
			t.Fatalf("frame %d: framing %v label %v", m.Frame, m.Framing, m.HasLabel)
		}
		got = append(got, fmt.Sprintf("%d opc=%d dpc=%d si=%d sls=%d", m.Frame, m.OPC, m.DPC, m.SI, m.SLS))
	}
	compareLists(t, "M2PA MSUs", got, want)
	if st.M2PANonMSU != nonMSU {
		t.Errorf("M2PANonMSU %d, tshark %d link status or empty user data", st.M2PANonMSU, nonMSU)
	}
	if st.Errors != 0 || st.NonM3UA != 0 || len(got) < 200 {
		t.Errorf("%d MSUs; stats %+v", len(got), st)
	}
	t.Logf("%d MSUs; stats %+v", len(got), st)
}
