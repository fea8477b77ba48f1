package isup

import "fmt"

// ParameterCode is the ISUP parameter name code (Q.763 Table 5, T1.113 Table 5).
type ParameterCode uint8

// Parameter codes. Codes from 0xC2 up marked ANSI exist only in T1.113.
const (
	ParamEndOfOptional              ParameterCode = 0x00
	ParamCallReference              ParameterCode = 0x01
	ParamTransmissionMediumReq      ParameterCode = 0x02
	ParamAccessTransport            ParameterCode = 0x03
	ParamCalledPartyNumber          ParameterCode = 0x04
	ParamSubsequentNumber           ParameterCode = 0x05
	ParamNatureOfConnection         ParameterCode = 0x06
	ParamForwardCallIndicators      ParameterCode = 0x07
	ParamOptionalForwardCall        ParameterCode = 0x08
	ParamCallingPartyCategory       ParameterCode = 0x09
	ParamCallingPartyNumber         ParameterCode = 0x0A
	ParamRedirectingNumber          ParameterCode = 0x0B
	ParamRedirectionNumber          ParameterCode = 0x0C
	ParamConnectionRequest          ParameterCode = 0x0D
	ParamInformationRequestInd      ParameterCode = 0x0E
	ParamInformationInd             ParameterCode = 0x0F
	ParamContinuityIndicators       ParameterCode = 0x10
	ParamBackwardCallIndicators     ParameterCode = 0x11
	ParamCauseIndicators            ParameterCode = 0x12
	ParamRedirectionInformation     ParameterCode = 0x13
	ParamCircuitGroupSupervision    ParameterCode = 0x15
	ParamRangeAndStatus             ParameterCode = 0x16
	ParamCallModificationInd        ParameterCode = 0x17
	ParamFacilityIndicator          ParameterCode = 0x18
	ParamCUGInterlockCode           ParameterCode = 0x1A
	ParamUserServiceInformation     ParameterCode = 0x1D
	ParamSignallingPointCode        ParameterCode = 0x1E
	ParamUserToUserInformation      ParameterCode = 0x20
	ParamConnectedNumber            ParameterCode = 0x21
	ParamSuspendResumeIndicators    ParameterCode = 0x22
	ParamTransitNetworkSelection    ParameterCode = 0x23
	ParamEventInformation           ParameterCode = 0x24
	ParamCircuitAssignmentMap       ParameterCode = 0x25
	ParamCircuitStateIndicator      ParameterCode = 0x26
	ParamAutomaticCongestionLevel   ParameterCode = 0x27
	ParamOriginalCalledNumber       ParameterCode = 0x28
	ParamOptionalBackwardCall       ParameterCode = 0x29
	ParamUserToUserIndicators       ParameterCode = 0x2A
	ParamOriginationISCPointCode    ParameterCode = 0x2B
	ParamGenericNotification        ParameterCode = 0x2C
	ParamCallHistoryInformation     ParameterCode = 0x2D
	ParamAccessDeliveryInformation  ParameterCode = 0x2E
	ParamNetworkSpecificFacility    ParameterCode = 0x2F
	ParamUserServiceInfoPrime       ParameterCode = 0x30
	ParamPropagationDelayCounter    ParameterCode = 0x31
	ParamRemoteOperations           ParameterCode = 0x32
	ParamServiceActivation          ParameterCode = 0x33
	ParamUserTeleserviceInformation ParameterCode = 0x34
	ParamTransmissionMediumUsed     ParameterCode = 0x35
	ParamCallDiversionInformation   ParameterCode = 0x36
	ParamEchoControlInformation     ParameterCode = 0x37
	ParamMessageCompatibility       ParameterCode = 0x38
	ParamParameterCompatibility     ParameterCode = 0x39
	ParamMLPPPrecedence             ParameterCode = 0x3A
	ParamMCIDRequest                ParameterCode = 0x3B
	ParamMCIDResponse               ParameterCode = 0x3C
	ParamHopCounter                 ParameterCode = 0x3D
	ParamTMRPrime                   ParameterCode = 0x3E
	ParamLocationNumber             ParameterCode = 0x3F
	ParamRedirectionNumberRestrict  ParameterCode = 0x40
	ParamCallTransferReference      ParameterCode = 0x43
	ParamLoopPreventionIndicators   ParameterCode = 0x44
	ParamCallTransferNumber         ParameterCode = 0x45
	ParamApplicationTransport       ParameterCode = 0x78
	ParamGenericNumber              ParameterCode = 0xC0 // ANSI: generic address
	ParamGenericDigits              ParameterCode = 0xC1
	ParamOperatorServicesInfo       ParameterCode = 0xC2 // ANSI
	ParamEgressService              ParameterCode = 0xC3 // ANSI
	ParamJurisdictionInformation    ParameterCode = 0xC4 // ANSI
	ParamCarrierIdentification      ParameterCode = 0xC5 // ANSI
	ParamBusinessGroup              ParameterCode = 0xC6 // ANSI
	ParamGenericName                ParameterCode = 0xC7 // ANSI
	ParamNotificationIndicator      ParameterCode = 0xE1 // ANSI
	ParamCircuitGroupCharacteristic ParameterCode = 0xE5 // ANSI
	ParamCircuitValidationResponse  ParameterCode = 0xE6 // ANSI
	ParamOutgoingTrunkGroupNumber   ParameterCode = 0xE7 // ANSI
	ParamCircuitIdentificationName  ParameterCode = 0xE8 // ANSI
	ParamCLLICode                   ParameterCode = 0xE9 // ANSI
	ParamOriginatingLineInformation ParameterCode = 0xEA // ANSI
	ParamChargeNumber               ParameterCode = 0xEB // ANSI
	ParamServiceCodeIndicator       ParameterCode = 0xEC // ANSI
	ParamSpecialProcessingRequest   ParameterCode = 0xED // ANSI
	ParamCarrierSelectionInfo       ParameterCode = 0xEE // ANSI
	ParamNetworkTransport           ParameterCode = 0xEF // ANSI
)

var parameterNames = [256]string{
	ParamEndOfOptional: "end of optional parameters", ParamCallReference: "call reference",
	ParamTransmissionMediumReq: "transmission medium requirement", ParamAccessTransport: "access transport",
	ParamCalledPartyNumber: "called party number", ParamSubsequentNumber: "subsequent number",
	ParamNatureOfConnection: "nature of connection indicators", ParamForwardCallIndicators: "forward call indicators",
	ParamOptionalForwardCall: "optional forward call indicators", ParamCallingPartyCategory: "calling party's category",
	ParamCallingPartyNumber: "calling party number", ParamRedirectingNumber: "redirecting number",
	ParamRedirectionNumber: "redirection number", ParamConnectionRequest: "connection request",
	ParamInformationRequestInd: "information request indicators", ParamInformationInd: "information indicators",
	ParamContinuityIndicators: "continuity indicators", ParamBackwardCallIndicators: "backward call indicators",
	ParamCauseIndicators: "cause indicators", ParamRedirectionInformation: "redirection information",
	ParamCircuitGroupSupervision: "circuit group supervision message type", ParamRangeAndStatus: "range and status",
	ParamCallModificationInd: "call modification indicators", ParamFacilityIndicator: "facility indicator",
	ParamCUGInterlockCode: "closed user group interlock code", ParamUserServiceInformation: "user service information",
	ParamSignallingPointCode: "signalling point code", ParamUserToUserInformation: "user-to-user information",
	ParamConnectedNumber: "connected number", ParamSuspendResumeIndicators: "suspend/resume indicators",
	ParamTransitNetworkSelection: "transit network selection", ParamEventInformation: "event information",
	ParamCircuitAssignmentMap: "circuit assignment map", ParamCircuitStateIndicator: "circuit state indicator",
	ParamAutomaticCongestionLevel: "automatic congestion level", ParamOriginalCalledNumber: "original called number",
	ParamOptionalBackwardCall: "optional backward call indicators", ParamUserToUserIndicators: "user-to-user indicators",
	ParamOriginationISCPointCode: "origination ISC point code", ParamGenericNotification: "generic notification indicator",
	ParamCallHistoryInformation: "call history information", ParamAccessDeliveryInformation: "access delivery information",
	ParamNetworkSpecificFacility: "network specific facility", ParamUserServiceInfoPrime: "user service information prime",
	ParamPropagationDelayCounter: "propagation delay counter", ParamRemoteOperations: "remote operations",
	ParamServiceActivation: "service activation", ParamUserTeleserviceInformation: "user teleservice information",
	ParamTransmissionMediumUsed: "transmission medium used", ParamCallDiversionInformation: "call diversion information",
	ParamEchoControlInformation: "echo control information", ParamMessageCompatibility: "message compatibility information",
	ParamParameterCompatibility: "parameter compatibility information", ParamMLPPPrecedence: "MLPP precedence",
	ParamMCIDRequest: "MCID request indicators", ParamMCIDResponse: "MCID response indicators",
	ParamHopCounter: "hop counter", ParamTMRPrime: "transmission medium requirement prime",
	ParamLocationNumber: "location number", ParamRedirectionNumberRestrict: "redirection number restriction",
	ParamCallTransferReference: "call transfer reference", ParamLoopPreventionIndicators: "loop prevention indicators",
	ParamCallTransferNumber: "call transfer number", ParamApplicationTransport: "application transport",
	ParamGenericNumber: "generic number", ParamGenericDigits: "generic digits",
	ParamOperatorServicesInfo: "operator services information", ParamEgressService: "egress service",
	ParamJurisdictionInformation: "jurisdiction information", ParamCarrierIdentification: "carrier identification",
	ParamBusinessGroup: "business group", ParamGenericName: "generic name",
	ParamNotificationIndicator: "notification indicator", ParamCircuitGroupCharacteristic: "circuit group characteristic indicator",
	ParamCircuitValidationResponse: "circuit validation response indicator", ParamOutgoingTrunkGroupNumber: "outgoing trunk group number",
	ParamCircuitIdentificationName: "circuit identification name", ParamCLLICode: "common language location identification",
	ParamOriginatingLineInformation: "originating line information", ParamChargeNumber: "charge number",
	ParamServiceCodeIndicator: "service code indicator", ParamSpecialProcessingRequest: "special processing request",
	ParamCarrierSelectionInfo: "carrier selection information", ParamNetworkTransport: "network transport",
}

// String returns the parameter's name from Q.763/T1.113, or "parameter(0xNN)".
func (c ParameterCode) String() string {
	if s := parameterNames[c]; s != "" {
		return s
	}
	return fmt.Sprintf("parameter(0x%02X)", uint8(c))
}

// Known reports whether the code has a name in either variant's table.
func (c ParameterCode) Known() bool { return parameterNames[c] != "" }
