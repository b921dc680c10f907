"""A recording HTTP CONNECT proxy on 127.0.0.1 (RFC 9110 §9.3.6), for tests of which proxy a
request goes through: it logs each CONNECT's target, connects every target host to 127.0.0.1 on the
target's port (so `*.example.test` names reach the test's servers), and relays bytes both ways.
Nothing else: any other method gets 405."""
import socket
import threading


class ConnectProxy:
    def __init__(self):
        self.targets = []
        self.lock = threading.Lock()
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = self.server.getsockname()[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.stopping = False
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.stopping = True
        self.server.close()

    def connects(self):
        with self.lock:
            return list(self.targets)

    def _accept(self):
        while not self.stopping:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        try:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = client.recv(4096)
                if not chunk:
                    return
                head += chunk
                if len(head) > 65536:
                    return
            request_line = head.split(b"\r\n", 1)[0].decode("latin-1").split()
            if len(request_line) != 3 or request_line[0] != "CONNECT":
                client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
                return
            target = request_line[1]
            with self.lock:
                self.targets.append(target)
            _, _, port = target.rpartition(":")
            upstream = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            rest = head.split(b"\r\n\r\n", 1)[1]
            if rest:
                upstream.sendall(rest)
            done = threading.Event()

            def pump(src, dst):
                try:
                    while True:
                        data = src.recv(65536)
                        if not data:
                            break
                        dst.sendall(data)
                except OSError:
                    pass
                finally:
                    done.set()

            threading.Thread(target=pump, args=(upstream, client), daemon=True).start()
            pump(client, upstream)
            done.wait(30)
            upstream.close()
        except (OSError, ValueError):
            pass
        finally:
            client.close()
