package client

import (
	"bufio"
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/wire"
)

// A gateway that refuses the hello answers, then closes at once: the client
// returns the nak, never "connection closed", however the two race.
func TestNakJustBeforeCloseIsReturned(t *testing.T) {
	for i := 0; i < 200; i++ {
		cc, sc := net.Pipe()
		go func() {
			defer sc.Close()
			br := bufio.NewReader(sc)
			if _, err := br.ReadBytes('\n'); err != nil {
				return
			}
			_, _ = sc.Write([]byte(`{"type":"nak","seq":1,"status":278,"name":"bad_token","detail":"wrong token: closing the connection"}` + "\n"))
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := New(ctx, cc, Config{App: "t", Token: "wrong"})
		cancel()
		var nak *Nak
		if !errors.As(err, &nak) || nak.Status != wire.StatusBadToken {
			t.Fatalf("attempt %d: %v, want nak 0x0116", i, err)
		}
	}
}
