/// Python peers for the run tests (servers get their port as argv[1]: `PythonServer`).

/// A TCP echo server, one thread per connection.
let echoServer = #"""
import socket, sys, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
def serve(c):
    with c:
        while True:
            d = c.recv(65536)
            if not d:
                break
            c.sendall(d)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""#

/// A server that speaks first (an SMTP-like banner), then waits for the client to close.
let bannerServer = #"""
import socket, sys, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
def serve(c):
    with c:
        c.sendall(b"220 banner.test ESMTP\r\n")
        while c.recv(65536):
            pass
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""#

/// A client that opens a CONNECT tunnel through tv (argv: proxy port, target host:port, mode,
/// payload) and then: `send` the payload, half-close and print everything that comes back;
/// `listen` without sending and print the first line the server says; `hold` send the payload,
/// read its echo and keep the tunnel open for 60 s.
let tunnelClient = #"""
import socket, sys, time
port, target, mode, payload = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4].encode()
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
data = b""
while b"\r\n\r\n" not in data:
    d = s.recv(4096)
    if not d:
        sys.exit("tunnel closed before its response: %r" % data)
    data += d
head, rest = data.split(b"\r\n\r\n", 1)
if not head.startswith(b"HTTP/1.1 200"):
    sys.exit("tunnel refused: %r" % head)
if mode == "send":
    s.sendall(payload)
    s.shutdown(socket.SHUT_WR)
    got = rest
    while True:
        d = s.recv(65536)
        if not d:
            break
        got += d
    sys.stdout.write(got.decode())
elif mode == "listen":
    got = rest
    s.settimeout(3)
    while b"\n" not in got:
        d = s.recv(4096)
        if not d:
            break
        got += d
    sys.stdout.write(got.decode())
else:
    s.sendall(payload)
    got = rest
    while len(got) < len(payload):
        got += s.recv(4096)
    sys.stdout.write(got.decode())
    sys.stdout.flush()
    time.sleep(60)
s.close()
"""#

/// Bad input, one connection after the other (argv: proxy port, TLS server port, a closed port,
/// count), five kinds in turn: random bytes instead of a proxy request; a CONNECT tunnel then a
/// truncated ClientHello and a FIN; a tunnel then a malformed TLS record; a tunnel then a real
/// ClientHello for vanish.test and a reset (the client vanishes mid-handshake, usually before
/// tv's certificate can reach it); a tunnel to a port where nothing listens (expects tv's 502).
let badInputFlood = #"""
import os, random, socket, ssl, struct, sys
port, tls_port, closed_port, count = (int(a) for a in sys.argv[1:5])
rng = random.Random(4)
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE

def tunnel(s, target):
    s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        d = s.recv(4096)
        if not d:
            break
        data += d
    return data

def client_hello():
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_hostname="vanish.test")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()

for i in range(count):
    kind = i % 5
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        if kind == 0:
            s.sendall(rng.randbytes(200))
        elif kind == 1:
            assert tunnel(s, f"localhost:{tls_port}").startswith(b"HTTP/1.1 200")
            s.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + rng.randbytes(30))
        elif kind == 2:
            assert tunnel(s, f"localhost:{tls_port}").startswith(b"HTTP/1.1 200")
            s.sendall(b"\x16\x03\x01\x00\x05hello")
        elif kind == 3:
            assert tunnel(s, f"localhost:{tls_port}").startswith(b"HTTP/1.1 200")
            s.sendall(client_hello())
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        else:
            head = tunnel(s, f"127.0.0.1:{closed_port}")
            assert head.startswith(b"HTTP/1.1 502"), head
    finally:
        s.close()
print("sent", count)
"""#
