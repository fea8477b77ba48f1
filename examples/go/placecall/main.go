// Command placecall uses the Go host API client: it places one call and prints
// every event until the call is released, or (with -answer) answers every
// incoming call offered to it.
//
//	go run ./examples/go/placecall -token secret -dpc 2 -called 4930123456
//	go run ./examples/go/placecall -token secret -answer
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/host/wire"
)

func main() {
	network := flag.String("network", "tcp", "tcp or unix")
	addr := flag.String("addr", wire.DefaultTCP, "gateway host API address (or socket path)")
	token := flag.String("token", os.Getenv("ISUPGW_TOKEN"), "shared token (or $ISUPGW_TOKEN)")
	dpc := flag.Uint("dpc", 0, "destination point code")
	route := flag.String("route", "", "circuit group name instead of -dpc")
	called := flag.String("called", "", "called number")
	calling := flag.String("calling", "", "calling number")
	hold := flag.Duration("hold", 0, "stay answered this long before releasing")
	answer := flag.Bool("answer", false, "answer incoming calls instead of placing one")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := client.Dial(ctx, *network, *addr, client.Config{App: "placecall", Token: *token, Incoming: *answer})
	if err != nil {
		fmt.Fprintln(os.Stderr, "placecall:", err)
		os.Exit(2)
	}
	defer c.Close()
	fmt.Printf("connected: %v\n", c.Hello)
	if *answer {
		os.Exit(answerCalls(ctx, c))
	}
	if *called == "" || (*dpc == 0 && *route == "") {
		fmt.Fprintln(os.Stderr, "placecall: give -called and -dpc or -route (or -answer)")
		os.Exit(2)
	}
	s, err := c.Outseize(ctx, client.Outseize{DPC: uint32(*dpc), Route: *route, Called: *called, Calling: *calling})
	if err != nil {
		fmt.Println("refused:", err)
		os.Exit(1)
	}
	fmt.Printf("seized: call %d on CIC %d towards %d\n", s.Call, s.CIC, s.DPC)
	answered := false
	for {
		select {
		case <-ctx.Done():
			c.Release(context.Background(), s.Call, 0, 0)
			os.Exit(1)
		case e, ok := <-c.Events():
			if !ok {
				fmt.Println("connection closed:", c.Err())
				os.Exit(2)
			}
			fmt.Printf("event: %T %+v\n", e, e)
			switch x := e.(type) {
			case *client.Answered:
				if x.Call == s.Call {
					answered = true
					time.Sleep(*hold)
					if err := c.Release(ctx, s.Call, 0, 0); err != nil {
						fmt.Println("release:", err)
					}
				}
			case *client.Released:
				if x.Call == s.Call {
					if answered {
						os.Exit(0)
					}
					os.Exit(1)
				}
			}
		}
	}
}

func answerCalls(ctx context.Context, c *client.Client) int {
	for {
		select {
		case <-ctx.Done():
			return 0
		case e, ok := <-c.Events():
			if !ok {
				fmt.Println("connection closed:", c.Err())
				return 2
			}
			fmt.Printf("event: %T %+v\n", e, e)
			if in, ok := e.(*client.Incoming); ok {
				if err := c.Alert(ctx, in.Call); err != nil {
					fmt.Println("alert:", err)
					continue
				}
				if err := c.Answer(ctx, in.Call); err != nil {
					fmt.Println("answer:", err)
				}
			}
		}
	}
}
