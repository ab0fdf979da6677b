#!/usr/bin/python3
"""An API that sends bytes no well-behaved server sends, written on raw sockets so every byte is
chosen, for dibs's tests of its HTTP client. One thread per connection, keep-alive.

  hostile_api.py DIR     listens on 127.0.0.1, a free port written to DIR/hostile_api.port

  GET /json/KEY          by the key's prefix:
    chunkext-...         Transfer-Encoding: chunked, then a chunk-size line "1;x=" followed by
                         endless bytes of extension, never a line end
    trailer-...          a chunked body "0" then an endless trailer field, never a blank line
    hints-...            103 Early Hints, then 100 Continue, then the answer for KEY
    extra-...            the answer for KEY, then at once a second complete answer, for "extra"
    late-...             the answer for KEY, then 50 ms later a second one, for "late-extra"
    owed-...             the answer for KEY; the connection's next request is answered first with
                         one for "owed-extra", then 200 ms later with its own: one answer behind
    vanish-...           read, counted, and the connection closed without an answer (a server that
                         crashed, or a proxy that timed the request out, after the work was done)
    closing-...          the answer for KEY (keep-alive, as HTTP/1.1 says), then the connection
                         closed at once: the next request on it finds a connection already gone
    anything else        {"status":"success","query":KEY} (a well-behaved answer)
  GET /seen/KEY          {"seen": N, "closed": B}: how many requests for KEY arrived, and whether
                         a closing- key's connection was closed
The endless ones stop when the client closes the connection.
"""
import json
import os
import socket
import sys
import threading
import time

SEEN = {}
CLOSED = set()
LOCK = threading.Lock()


def answer(key, status=200, reason="OK"):
    body = json.dumps({"status": "success", "query": key}).encode()
    head = "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (status, reason, len(body))
    return head.encode() + body


def endless(conn, head, filler):
    try:
        conn.sendall(head)
        chunk = filler * 65536
        while True:
            conn.sendall(chunk)
    except OSError:
        pass


def serve(conn):
    buf = b""
    owed = False
    try:
        while True:
            while b"\r\n\r\n" not in buf:
                data = conn.recv(65536)
                if not data:
                    return
                buf += data
            head, buf = buf.split(b"\r\n\r\n", 1)
            path = head.split(b" ")[1].decode()
            parts = path.split("/", 2)
            key = parts[2] if len(parts) == 3 and parts[1] == "json" else ""
            if key:
                with LOCK:
                    SEEN[key] = SEEN.get(key, 0) + 1
            if len(parts) == 3 and parts[1] == "seen":
                with LOCK:
                    body = json.dumps({"seen": SEEN.get(parts[2], 0), "closed": parts[2] in CLOSED}).encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                continue
            if owed:
                owed = False
                conn.sendall(answer("owed-extra"))
                time.sleep(0.2)
            if not key:
                conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            elif key.startswith("chunkext-"):
                endless(conn, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;x=", b"a")
                return
            elif key.startswith("trailer-"):
                endless(conn, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Pad\r\n\r\n0\r\nX-Pad: ", b"b")
                return
            elif key.startswith("hints-"):
                conn.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
                             b"HTTP/1.1 100 Continue\r\n\r\n" + answer(key))
            elif key.startswith("vanish-"):
                return
            elif key.startswith("closing-"):
                conn.sendall(answer(key))
                conn.close()
                with LOCK:
                    CLOSED.add(key)
                return
            elif key.startswith("extra-"):
                conn.sendall(answer(key) + answer("extra"))
            elif key.startswith("late-"):
                conn.sendall(answer(key))
                time.sleep(0.05)
                conn.sendall(answer("late-extra"))
            elif key.startswith("owed-"):
                conn.sendall(answer(key))
                owed = True
            else:
                conn.sendall(answer(key))
    except OSError:
        pass
    finally:
        conn.close()


def main():
    directory = sys.argv[1]
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(128)
    tmp = os.path.join(directory, "hostile_api.port.tmp")
    with open(tmp, "w") as f:
        f.write(str(srv.getsockname()[1]))
    os.rename(tmp, os.path.join(directory, "hostile_api.port"))
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
