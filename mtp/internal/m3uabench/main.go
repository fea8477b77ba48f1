// Command m3uabench measures M3UA DATA throughput between two processes
// over the udp transport (SCTP over UDP, pion/sctp underneath) and, in the
// same run, bare pion/sctp over UDP, and prints both with their ratio.
//
// Each measurement starts this binary again as the peer process (-child).
// Modes: one-way (sender pushes N messages, the receiver reports when all
// have arrived) and request/response with a window of 8 outstanding.
// Payloads are 100 bytes: M3UA carries them in DATA (132 octets with the
// header, RC-less); bare pion sends the 100 bytes as the SCTP message.
//
//	go run ./mtp/internal/m3uabench -n 200000 -nrr 100000 -runs 3 [-sls 1]
//
// Measured on the 2-core development VM, shared with other work (load
// average 2-5, so single runs vary by a third or more; medians of 3):
//
//	16 SLS: one-way m3ua 128-155k msg/s vs pion 149-151k (0.86-1.03);
//	        request/response (8 outstanding) m3ua 22-26k vs pion 33-40k (0.67)
//	 1 SLS: one-way 141-147k vs 145-178k (0.79-1.01);
//	        request/response 39-42k vs 34-56k (0.74-1.16)
//
// With bare pion also spread over 15 streams (-pionstreams 15), the same
// request/response comparison gives m3ua 37k vs pion 36k (1.02; allocations
// 40.7 vs 39.8 per message): the cost is the stream count, not M3UA.
//
// Allocations per message: M3UA sender 13.5, receiver 17.9 one-way (pion
// 13.3 / 15.9); M3UA itself adds the payload copy handed to the MTP user,
// the rest is pion. The request/response gap with 16 SLS is pion's
// per-stream delivery (one reader goroutine woken per stream, less
// bundling), not the M3UA code.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"time"
)

var (
	child   = flag.String("child", "", "internal: run as the peer process for this measurement")
	n       = flag.Int("n", 200000, "messages per one-way measurement")
	nrr     = flag.Int("nrr", 100000, "requests per request/response measurement")
	window  = flag.Int("window", 8, "outstanding requests in request/response")
	runs    = flag.Int("runs", 3, "repetitions; the median is reported")
	payload = flag.Int("payload", 100, "user payload octets")
	only    = flag.String("only", "", "run only this measurement, e.g. m3ua/oneway")
	maxBuf  = flag.Uint64("maxbuf", 0, "m3ua: transport WithMaxBuffered (0: default)")
	slsN    = flag.Int("sls", 16, "m3ua: distinct SLS values used (each maps to its own stream)")
	pionN   = flag.Int("pionstreams", 1, "bare pion: streams used round-robin (1 = the simplest use)")
	memProf = flag.String("memprofile", "", "write the sender's allocation profile here")
	cpuProf = flag.String("cpuprofile", "", "write the sender's CPU profile here")
)

func main() {
	flag.Parse()
	if *child != "" {
		if err := runChild(*child); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		return
	}
	if *cpuProf != "" {
		f, err := os.Create(*cpuProf)
		if err == nil {
			_ = pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	if *memProf != "" {
		runtime.MemProfileRate = 4096
		defer func() {
			if f, err := os.Create(*memProf); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				_ = f.Close()
			}
		}()
	}
	fmt.Printf("m3uabench: %d-byte payloads, M3UA over %d SLS, bare pion over %d streams, two processes on 127.0.0.1, GOMAXPROCS=%d, NumCPU=%d, %s\n",
		*payload, *slsN, *pionN, runtime.GOMAXPROCS(0), runtime.NumCPU(), runtime.Version())
	type row struct{ name, mode string }
	results := map[string]result{}
	for _, r := range []row{
		{"pion", "oneway"}, {"m3ua", "oneway"}, {"pion", "rr"}, {"m3ua", "rr"},
	} {
		if *only != "" && *only != r.name+"/"+r.mode {
			continue
		}
		var all []result
		for range *runs {
			res, err := measure(r.name, r.mode)
			if err != nil {
				fmt.Fprintln(os.Stderr, r.name, r.mode, ":", err)
				return
			}
			all = append(all, res)
		}
		sort.Slice(all, func(i, j int) bool { return all[i].rate < all[j].rate })
		med := all[len(all)/2]
		results[r.name+"/"+r.mode] = med
		rates := make([]string, len(all))
		for i, a := range all {
			rates[i] = fmt.Sprintf("%.0f", a.rate)
		}
		fmt.Printf("%-5s %-7s %9.0f msg/s (runs %s)  allocs/msg: sender %.1f receiver %.1f\n",
			r.name, r.mode, med.rate, strings.Join(rates, " "), med.senderAllocs, med.peerAllocs)
	}
	for _, mode := range []string{"oneway", "rr"} {
		fmt.Printf("ratio m3ua/pion %-7s %.2f\n", mode, results["m3ua/"+mode].rate/results["pion/"+mode].rate)
	}
}

type result struct {
	rate                     float64
	senderAllocs, peerAllocs float64
}

// measure starts the peer process, runs the client side here and returns
// the rate and allocations per message on both sides.
func measure(name, mode string) (result, error) {
	count := *n
	if mode == "rr" {
		count = *nrr
	}
	self, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	cmd := exec.Command(self, "-child", name+"/"+mode, "-n", fmt.Sprint(count), "-payload", fmt.Sprint(*payload),
		"-pionstreams", fmt.Sprint(*pionN),
		"-maxbuf", fmt.Sprint(*maxBuf))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return result{}, err
	}
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(out)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "ADDR ") {
		return result{}, fmt.Errorf("peer did not report its address")
	}
	addr := strings.TrimPrefix(lines.Text(), "ADDR ")
	var rate, allocs float64
	switch name {
	case "m3ua":
		rate, allocs, err = m3uaClient(addr, mode, count)
	case "pion":
		rate, allocs, err = pionClient(addr, mode, count)
	}
	if err != nil {
		return result{}, err
	}
	var peerAllocs float64
	if lines.Scan() {
		_, _ = fmt.Sscanf(lines.Text(), "ALLOCS %f", &peerAllocs)
	}
	return result{rate: rate, senderAllocs: allocs, peerAllocs: peerAllocs}, nil
}

func runChild(what string) error {
	name, mode, _ := strings.Cut(what, "/")
	switch name {
	case "m3ua":
		return m3uaServer(mode, *n)
	case "pion":
		return pionServer(mode, *n)
	}
	return fmt.Errorf("unknown peer %q", what)
}

// mallocs returns the process's allocation count so far.
func mallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

func perMsg(before uint64, count int) float64 {
	return float64(mallocs()-before) / float64(count)
}

func since(t time.Time, count int) float64 { return float64(count) / time.Since(t).Seconds() }
