package isup

import "testing"

func TestDescribeString(t *testing.T) {
	want := map[string]string{
		"IAM ITU":                   "called=12345 called_nai=3 calling=1234567890 calling_nai=3 presentation=0 cpc=10 nci=00 fci=6001 tmr=0",
		"IAM ANSI":                  "called=6690912345F called_nai=3 calling=9542369778 calling_nai=3 presentation=0 cpc=0 nci=00 fci=2001 usi=9090a2",
		"REL with ACL":              "cause=42 location=2 acl=2",
		"REL ANSI with diagnostics": "cause=16 location=3 coding=2 diagnostics=01",
		"CGB hardware":              "supervision=1 range=7 status=ff",
		"CQR":                       "range=2 states=0c0503",
		"COT success":               "success=true",
		"unknown type kept raw":     "body=dead",
	}
	for _, tc := range messageCases(t) {
		w, ok := want[tc.name]
		if !ok {
			continue
		}
		if got := DescribeString(tc.msg); got != w {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, w)
		}
		delete(want, tc.name)
	}
	for name := range want {
		t.Errorf("no case named %q", name)
	}
}
