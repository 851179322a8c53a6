"""A minimal asyncio WebSocket client and HTTP/1.1 keep-alive client for the realtime benchmarks.

Standard library only (RFC 6455: masked client frames, text/ping/pong/close), so the benchmark
needs nothing beyond python3; thousands of clients fit in one process.
"""
import asyncio
import base64
import json
import os
import struct


class WebSocket:
    def __init__(self, reader, writer):
        self.reader = reader
        self.writer = writer

    @classmethod
    async def connect(cls, port, path, host="127.0.0.1"):
        reader, writer = await asyncio.open_connection(host, port)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        if status != 101:
            writer.close()
            raise ConnectionError(f"upgrade answered {status}")
        return cls(reader, writer)

    def send_text(self, text):
        self._send(0x1, text.encode())

    def _send(self, opcode, payload):
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([0x80 | opcode])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack("!Q", n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.writer.write(head + mask + masked)

    async def recv(self):
        """The next text message as a string; None once the server closed."""
        while True:
            try:
                b0, b1 = await self.reader.readexactly(2)
            except (asyncio.IncompleteReadError, ConnectionError):
                return None
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", await self.reader.readexactly(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", await self.reader.readexactly(8))[0]
            payload = await self.reader.readexactly(n)
            opcode = b0 & 0x0F
            if opcode == 0x1:
                return payload.decode()
            if opcode == 0x9:
                self._send(0xA, payload)
            elif opcode == 0x8:
                return None

    async def ready(self):
        """Pings with {"type":"ping"} and waits for the pong: the server has subscribed us."""
        self.send_text('{"type":"ping"}')
        while True:
            text = await self.recv()
            if text is None:
                raise ConnectionError("closed before the pong")
            if json.loads(text).get("type") == "pong":
                return

    def close(self):
        self.writer.close()


class HTTP:
    """One keep-alive HTTP/1.1 connection; `request` returns (status, parsed JSON or None)."""

    def __init__(self, reader, writer, host, port):
        self.reader, self.writer, self.host, self.port = reader, writer, host, port

    @classmethod
    async def connect(cls, port, host="127.0.0.1"):
        reader, writer = await asyncio.open_connection(host, port)
        return cls(reader, writer, host, port)

    async def request(self, method, path, body=None, token=None):
        data = b"" if body is None else json.dumps(body).encode()
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Length: {len(data)}\r\n"
        if body is not None:
            head += "Content-Type: application/json\r\n"
        if token:
            head += f"Authorization: Bearer {token}\r\n"
        self.writer.write(head.encode() + b"\r\n" + data)
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode().split("\r\n")
        status = int(lines[0].split(" ")[1])
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        payload = await self.reader.readexactly(length) if length else b""
        try:
            return status, json.loads(payload) if payload else None
        except ValueError:
            return status, None

    def close(self):
        self.writer.close()

