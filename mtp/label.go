package mtp

import "fmt"

// PointCode is a signalling point code, right-justified (14-bit ITU,
// 24-bit ANSI).
type PointCode uint32

// Service indicators (Q.704 §14.2.1) that matter here.
const (
	SISCCP uint8 = 3
	SITUP  uint8 = 4
	SIISUP uint8 = 5
	SIBICC uint8 = 13
)

// Label is the MTP routing label plus the service information octet
// fields that M3UA carries in Protocol Data.
type Label struct {
	OPC PointCode
	DPC PointCode
	SI  uint8 // service indicator
	NI  uint8 // network indicator
	MP  uint8 // message priority (ANSI; 0 for ITU)
	SLS uint8 // signalling link selection
}

func (l Label) String() string {
	return fmt.Sprintf("OPC=%d DPC=%d SI=%d NI=%d MP=%d SLS=%d", l.OPC, l.DPC, l.SI, l.NI, l.MP, l.SLS)
}

// Message is an MTP-TRANSFER request or indication.
type Message struct {
	Label
	Payload []byte
	// Peer names the association the indication came in on (empty on
	// requests).
	Peer string
}
