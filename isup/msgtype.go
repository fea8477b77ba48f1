package isup

import "fmt"

// MessageType is the ISUP message type code (Q.763 Table 4, T1.113 Table 3).
type MessageType uint8

// Message type codes. Codes marked ANSI exist only in T1.113; the 0x1C-0x26 range is
// reserved in later ITU editions and used by ANSI.
const (
	IAM  MessageType = 0x01 // initial address
	SAM  MessageType = 0x02 // subsequent address (ITU)
	INR  MessageType = 0x03 // information request
	INF  MessageType = 0x04 // information
	COT  MessageType = 0x05 // continuity
	ACM  MessageType = 0x06 // address complete
	CON  MessageType = 0x07 // connect (ITU)
	FOT  MessageType = 0x08 // forward transfer
	ANM  MessageType = 0x09 // answer
	REL  MessageType = 0x0C // release
	SUS  MessageType = 0x0D // suspend
	RES  MessageType = 0x0E // resume
	RLC  MessageType = 0x10 // release complete
	CCR  MessageType = 0x11 // continuity check request
	RSC  MessageType = 0x12 // reset circuit
	BLO  MessageType = 0x13 // blocking
	UBL  MessageType = 0x14 // unblocking
	BLA  MessageType = 0x15 // blocking acknowledgement
	UBA  MessageType = 0x16 // unblocking acknowledgement
	GRS  MessageType = 0x17 // circuit group reset
	CGB  MessageType = 0x18 // circuit group blocking
	CGU  MessageType = 0x19 // circuit group unblocking
	CGBA MessageType = 0x1A // circuit group blocking acknowledgement
	CGUA MessageType = 0x1B // circuit group unblocking acknowledgement
	CMR  MessageType = 0x1C // call modification request
	CMC  MessageType = 0x1D // call modification completed
	CMRJ MessageType = 0x1E // call modification reject
	FAR  MessageType = 0x1F // facility request
	FAA  MessageType = 0x20 // facility accepted
	FRJ  MessageType = 0x21 // facility reject
	FAD  MessageType = 0x22 // facility deactivated (ANSI)
	FAI  MessageType = 0x23 // facility information (ANSI)
	LPA  MessageType = 0x24 // loop back acknowledgement
	CSVR MessageType = 0x25 // circuit validation request (ANSI)
	CSVS MessageType = 0x26 // circuit validation response (ANSI)
	DRS  MessageType = 0x27 // delayed release
	PAM  MessageType = 0x28 // pass along
	GRA  MessageType = 0x29 // circuit group reset acknowledgement
	CQM  MessageType = 0x2A // circuit group query
	CQR  MessageType = 0x2B // circuit group query response
	CPG  MessageType = 0x2C // call progress
	USR  MessageType = 0x2D // user-to-user information
	UCIC MessageType = 0x2E // unequipped CIC
	CFN  MessageType = 0x2F // confusion
	OLM  MessageType = 0x30 // overload
	CRG  MessageType = 0x31 // charge information
	NRM  MessageType = 0x32 // network resource management
	FAC  MessageType = 0x33 // facility
	UPT  MessageType = 0x34 // user part test
	UPA  MessageType = 0x35 // user part available
	IDR  MessageType = 0x36 // identification request
	IRS  MessageType = 0x37 // identification response
	SGM  MessageType = 0x38 // segmentation
	LOP  MessageType = 0x40 // loop prevention
	APM  MessageType = 0x41 // application transport
	PRI  MessageType = 0x42 // pre-release information
	SDN  MessageType = 0x43 // subsequent directory number
	CRA  MessageType = 0xE9 // circuit reservation acknowledgement (ANSI)
	CRM  MessageType = 0xEA // circuit reservation (ANSI)
	CVR  MessageType = 0xEB // circuit validation response (ANSI)
	CVT  MessageType = 0xEC // circuit validation test (ANSI)
	EXM  MessageType = 0xED // exit (ANSI)
)

var messageTypeNames = [256]string{
	IAM: "IAM", SAM: "SAM", INR: "INR", INF: "INF", COT: "COT", ACM: "ACM", CON: "CON",
	FOT: "FOT", ANM: "ANM", REL: "REL", SUS: "SUS", RES: "RES", RLC: "RLC", CCR: "CCR",
	RSC: "RSC", BLO: "BLO", UBL: "UBL", BLA: "BLA", UBA: "UBA", GRS: "GRS", CGB: "CGB",
	CGU: "CGU", CGBA: "CGBA", CGUA: "CGUA", CMR: "CMR", CMC: "CMC", CMRJ: "CMRJ",
	FAR: "FAR", FAA: "FAA", FRJ: "FRJ", FAD: "FAD", FAI: "FAI", LPA: "LPA", CSVR: "CSVR",
	CSVS: "CSVS", DRS: "DRS", PAM: "PAM", GRA: "GRA", CQM: "CQM", CQR: "CQR", CPG: "CPG",
	USR: "USR", UCIC: "UCIC", CFN: "CFN", OLM: "OLM", CRG: "CRG", NRM: "NRM", FAC: "FAC",
	UPT: "UPT", UPA: "UPA", IDR: "IDR", IRS: "IRS", SGM: "SGM", LOP: "LOP", APM: "APM",
	PRI: "PRI", SDN: "SDN", CRA: "CRA", CRM: "CRM", CVR: "CVR", CVT: "CVT", EXM: "EXM",
}

// String returns the usual abbreviation (IAM, REL, ...) or "type(0xNN)".
func (t MessageType) String() string {
	if s := messageTypeNames[t]; s != "" {
		return s
	}
	return fmt.Sprintf("type(0x%02X)", uint8(t))
}

// ParseMessageType accepts an abbreviation such as "IAM" (exact case).
func ParseMessageType(s string) (MessageType, bool) {
	for i, n := range messageTypeNames {
		if n == s {
			return MessageType(i), true
		}
	}
	return 0, false
}
