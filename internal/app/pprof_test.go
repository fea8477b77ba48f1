package app

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestProfilesOnlyOnLoopback(t *testing.T) {
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	for _, c := range []struct {
		ip   string
		want int
	}{{"127.0.0.1", http.StatusOK}, {"::1", http.StatusOK}, {"192.0.2.1", http.StatusTeapot}, {"0.0.0.0", http.StatusTeapot}} {
		h := withProfiles(inner, &net.TCPAddr{IP: net.ParseIP(c.ip), Port: 9700})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/pprof/", nil))
		if rec.Code != c.want {
			t.Errorf("metrics on %s: /debug/pprof/ answered %d, want %d", c.ip, rec.Code, c.want)
		}
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		if rec.Code != http.StatusTeapot {
			t.Errorf("metrics on %s: /metrics not passed on (%d)", c.ip, rec.Code)
		}
	}
}
