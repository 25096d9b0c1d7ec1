#!/usr/bin/env python3
"""Sends a fixed number of requests over one keep-alive connection and reads every response.

Used to count the server's instructions per request (`perf stat -e instructions:u -p PID` or callgrind around a
run): the work per request is then the same every run, whatever the machine's load, unlike requests/s.

    Benchmarks/requests.py --port 8080 --path /customer-00001.json.signed --count 20000 [--if-none-match]
"""
import argparse
import socket
import sys


def read_response(sock, buffer):
    """Reads one response; returns (status, body length, rest of the buffer)."""
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        if not chunk:
            raise SystemExit("connection closed mid-response")
        buffer += chunk
    head, _, rest = buffer.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ")[1])
    length = 0
    etag = None
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
        elif name.strip().lower() == b"etag":
            etag = value.strip().decode()
    if status == 304:
        length = 0
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise SystemExit("connection closed mid-body")
        rest += chunk
    return status, etag, rest[length:]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", default="/customer-00001.json.signed")
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--if-none-match", action="store_true", help="send the bundle's ETag: every answer is 304")
    parser.add_argument("--header", action="append", default=[], help="an extra request field, 'Name: value'")
    options = parser.parse_args()

    sock = socket.create_connection(("127.0.0.1", options.port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    extra = "".join(f"{h}\r\n" for h in options.header)
    plain = f"GET {options.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: requests.py\r\n{extra}\r\n".encode()
    buffer = b""
    sock.sendall(plain)
    status, etag, buffer = read_response(sock, buffer)
    if status != 200:
        raise SystemExit(f"first request answered {status}")
    request = plain
    expected = 200
    if options.if_none_match:
        request = (f"GET {options.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: requests.py\r\n"
                   f"If-None-Match: {etag}\r\n{extra}\r\n").encode()
        expected = 304
    # Ready: whoever measures the server starts now, and stops when this process exits.
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.readline()
    for _ in range(options.count):
        sock.sendall(request)
        status, _, buffer = read_response(sock, buffer)
        if status != expected:
            raise SystemExit(f"answered {status}, expected {expected}")
    sock.close()


if __name__ == "__main__":
    main()
