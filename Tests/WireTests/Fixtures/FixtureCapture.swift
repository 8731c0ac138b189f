// How the Captured* fixtures were made (2026-11-30, Debian 12, OpenSSL 3.0.22, curl 7.88.1,
// Python 3.11.7), so they can be captured again. Everything ran on 127.0.0.1; each fixture's doc
// comment gives the exact client or server command. This file holds no code.
//
// ClientHellos: `python3 dump_server.py PORT OUT` accepted one connection and wrote the first
// bytes received as hex; the client command was then run against PORT.
//
//     # Accepts one TCP connection on 127.0.0.1:PORT and dumps the first bytes received (hex) to OUT.
//     import socket, sys, time
//     port, out = int(sys.argv[1]), sys.argv[2]
//     s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
//     s.bind(("127.0.0.1", port)); s.listen(1)
//     c, _ = s.accept(); c.settimeout(2)
//     data = b""
//     deadline = time.time() + 2
//     while time.time() < deadline:
//         try:
//             d = c.recv(65536)
//         except socket.timeout:
//             break
//         if not d: break
//         data += d
//         # stop once a full TLS record set for the handshake is likely in
//         if len(data) >= 5:
//             n = int.from_bytes(data[3:5], "big")
//             if len(data) >= 5 + n: break
//     open(out, "w").write(data.hex())
//     c.close(); s.close()
//
// ServerHellos: a throwaway certificate
//     openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout key.pem \
//         -out cert.pem -days 1 -subj /CN=a.test
// then `openssl s_server -accept PORT -cert cert.pem -key key.pem -quiet <flags>` and
// `python3 send_hello.py PORT CLIENTHELLO_HEX_FILE OUT`:
//
//     # Connects to 127.0.0.1:PORT, sends the ClientHello bytes in CH_HEX_FILE, dumps everything received in 1.5 s (hex) to OUT.
//     import socket, sys, time
//     port, chfile, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
//     s = socket.create_connection(("127.0.0.1", port)); s.settimeout(0.5)
//     s.sendall(bytes.fromhex(open(chfile).read().strip()))
//     data = b""; deadline = time.time() + 1.5
//     while time.time() < deadline:
//         try: d = s.recv(65536)
//         except socket.timeout: continue
//         if not d: break
//         data += d
//     open(out, "w").write(data.hex()); s.close()
//
// SOCKS5: `python3 socks_server.py PORT OUT`, then the curl command against PORT:
//
//     # Accepts one connection on 127.0.0.1:PORT, dumps the SOCKS5 greeting, answers 05 00, dumps the request; writes "greeting_hex request_hex" to OUT.
//     import socket, sys, time
//     port, out = int(sys.argv[1]), sys.argv[2]
//     s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
//     s.bind(("127.0.0.1", port)); s.listen(1)
//     c, _ = s.accept(); c.settimeout(1)
//     g = c.recv(1024); c.sendall(b"\x05\x00")
//     r = b""
//     try:
//         while True:
//             d = c.recv(1024)
//             if not d: break
//             r += d
//             if len(r) >= 5 and len(r) >= 7 + r[4]: break
//     except socket.timeout: pass
//     open(out, "w").write(g.hex() + " " + r.hex()); c.close(); s.close()
//
// HTTP proxy heads: `python3 head_server.py PORT OUT`, then `curl -x http://127.0.0.1:PORT …`:
//
//     # Accepts one connection on 127.0.0.1:PORT and dumps bytes up to and including the first CRLFCRLF (hex) to OUT.
//     import socket, sys
//     port, out = int(sys.argv[1]), sys.argv[2]
//     s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
//     s.bind(("127.0.0.1", port)); s.listen(1)
//     c, _ = s.accept(); c.settimeout(2); data = b""
//     while b"\r\n\r\n" not in data:
//         d = c.recv(65536)
//         if not d: break
//         data += d
//     open(out, "w").write(data.hex()); c.close(); s.close()
