#!/usr/bin/env python3
"""Place one call through the isupgw host API, or answer calls, printing every message.

Standard library only. It says hello, sends an outseize, prints every line the
gateway sends ("<<") and every line it sends (">>"), releases the call once it
is answered (after --hold seconds), and exits when the call's "released"
arrives: status 0 if the call was answered, 1 if it was refused or released
before answer, 2 on a protocol or connection error.

With --answer it is the other end, like the Go example's -answer: it asks in
hello to be offered incoming calls, and alerts (ACM) and answers (ANM) each
one after --delay seconds; the caller (or the network) releases. It runs until
interrupted, or until --count calls it answered were released (status 0).

    python3 place_call.py --tcp 127.0.0.1:7700 --token secret --dpc 2 --called 4930123456
    python3 place_call.py --unix /run/isupgw/host.sock --token secret --route peer --called 123
    python3 place_call.py --tcp 127.0.0.1:7701 --token secret --answer
"""
import argparse
import itertools
import json
import os
import socket
import sys
import time


def connect(args):
    if args.unix:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(args.timeout)
        s.connect(args.unix)
    else:
        host, _, port = args.tcp.rpartition(":")
        s = socket.create_connection((host or "127.0.0.1", int(port)), timeout=args.timeout)
    return s


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tcp", default="127.0.0.1:7700", help="gateway host API address (default %(default)s)")
    p.add_argument("--unix", help="Unix socket path instead of TCP")
    p.add_argument("--token", default=os.environ.get("ISUPGW_TOKEN", ""), help="shared token (or $ISUPGW_TOKEN)")
    p.add_argument("--app", default="place_call.py")
    p.add_argument("--dpc", type=int, help="destination point code")
    p.add_argument("--route", help="circuit group name instead of --dpc")
    p.add_argument("--called", help="called number (required unless --answer)")
    p.add_argument("--calling")
    p.add_argument("--hold", type=float, default=0.0, help="seconds to stay answered before releasing")
    p.add_argument("--timeout", type=float,
                   help="give up after this many seconds of silence (default 30; with --answer none; 0: none)")
    p.add_argument("--answer", action="store_true", help="answer incoming calls instead of placing one")
    p.add_argument("--delay", type=float, default=0.0, help="--answer: seconds before alerting and answering")
    p.add_argument("--count", type=int, default=0, help="--answer: exit after this many answered calls were released (0: never)")
    args = p.parse_args()
    if args.answer:
        if args.dpc is not None or args.route or args.called:
            p.error("--answer takes no --dpc, --route or --called")
    elif args.called is None or (args.dpc is None and not args.route):
        p.error("give --called and --dpc or --route (or --answer)")
    if args.timeout is None and not args.answer:
        args.timeout = 30.0  # an answering host waits for calls as long as it runs
    if args.timeout == 0:
        args.timeout = None

    try:
        sock = connect(args)
    except OSError as e:
        print("connect: %s" % e, file=sys.stderr)
        return 2
    f = sock.makefile("rwb")
    seqs = itertools.count(1)

    def send(msg):
        msg["seq"] = next(seqs)
        line = json.dumps(msg, separators=(",", ":"))
        print(">> " + line, flush=True)
        f.write(line.encode() + b"\n")
        f.flush()
        return msg["seq"]

    def messages():
        for raw in f:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            print("<< " + line, flush=True)
            yield json.loads(line)

    try:
        hello_msg = {"type": "hello", "version": 1, "app": args.app, "token": args.token}
        if args.answer:
            hello_msg["incoming"] = True
        hello = send(hello_msg)
        events = messages()
        for m in events:
            if m.get("seq") == hello and m["type"] in ("ack", "nak"):
                if m["type"] == "nak":
                    return 2
                break
        if args.answer:
            return answer_calls(args, send, events)
        req = {"type": "outseize", "called": args.called}
        if args.route:
            req["route"] = args.route
        else:
            req["dpc"] = args.dpc
        if args.calling:
            req["calling"] = args.calling
        outseize = send(req)
        call, answered = None, False
        for m in events:
            t = m.get("type")
            if m.get("seq") == outseize and t == "nak":
                return 1
            if m.get("seq") == outseize and t == "ack":
                call = m["call"]
            elif t == "answered" and m.get("call") == call:
                answered = True
                if args.hold > 0:
                    time.sleep(args.hold)
                send({"type": "release", "call": call, "cause": 16})
            elif t == "released" and m.get("call") == call:
                return 0 if answered else 1
        print("connection closed by the gateway", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0 if args.answer else 1
    except (OSError, ValueError) as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    finally:
        sock.close()


def answer_calls(args, send, events):
    """Alert and answer every incoming call; count the answered ones released."""
    answered, done = set(), 0
    for m in events:
        t = m.get("type")
        if t == "incoming":
            call = m["call"]
            if args.delay > 0:
                time.sleep(args.delay)
            send({"type": "alert", "call": call})
            send({"type": "answer", "call": call})
            answered.add(call)
        elif t == "nak" and m.get("call") in answered:
            answered.discard(m["call"])  # the call ended before our answer arrived
        elif t == "released" and m.get("call") in answered:
            answered.discard(m["call"])
            done += 1
            if args.count and done >= args.count:
                return 0
    print("connection closed by the gateway", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
