"""Raw-socket checks of how the broker (kafka-protocol fake) answers what it does not handle:

- ApiVersions at an unsupported version (v99): a v0 body with error 35 and
  the ApiVersions range, response header v0;
- an api the broker does not implement (DescribeAcls v3): error 35 in the
  response body, connection kept open (an ApiVersions v0 still works after);
- an api key unknown to the crate (0x7fff): the connection is closed.

    edge_cases.py HOST:PORT
"""

import socket
import struct
import sys


def connect(bootstrap):
    host, port = bootstrap.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=10)


def request(sock, api_key, version, correlation_id, body=b"", flexible_header=False):
    client_id = b"edge-cases"
    header = struct.pack(">hhih", api_key, version, correlation_id, len(client_id)) + client_id
    if flexible_header:
        header += b"\x00"  # no tagged fields
    frame = header + body
    sock.sendall(struct.pack(">i", len(frame)) + frame)


def response(sock):
    size_bytes = recv_exactly(sock, 4)
    if size_bytes is None:
        return None
    (size,) = struct.unpack(">i", size_bytes)
    return recv_exactly(sock, size)


def recv_exactly(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def main():
    bootstrap = sys.argv[1]
    problems = []

    sock = connect(bootstrap)
    request(sock, 18, 99, 1, flexible_header=True)
    frame = response(sock)
    # correlation id, error code 35, array of 1 entry: key 18, min 0, max 4.
    if frame is None or frame[:6] != struct.pack(">ih", 1, 35) or frame[6:10] != struct.pack(">i", 1):
        problems.append(f"ApiVersions v99: unexpected reply {frame!r}")
    else:
        print("edge: ApiVersions v99 -> v0 reply with UNSUPPORTED_VERSION (35)")

    # DescribeAcls v3 (flexible): resource type filter 1 (any) etc.
    body = (b"\x01"  # resource type filter: ANY
            + b"\x00"  # resource name filter: null compact string
            + b"\x03"  # pattern type filter: MATCH
            + b"\x00"  # principal filter: null
            + b"\x00"  # host filter: null
            + b"\x01"  # operation: ANY
            + b"\x01"  # permission type: ANY
            + b"\x00")  # tagged fields
    request(sock, 29, 3, 2, body, flexible_header=True)
    frame = response(sock)
    # header v1: correlation id, tagged fields; body: throttle, error code.
    if frame is None or frame[:4] != struct.pack(">i", 2) or frame[9:11] != struct.pack(">h", 35):
        problems.append(f"DescribeAcls v3: unexpected reply {frame!r}")
    else:
        print("edge: DescribeAcls v3 -> UNSUPPORTED_VERSION (35)")
    request(sock, 18, 0, 3)
    frame = response(sock)
    if frame is None or frame[:6] != struct.pack(">ih", 3, 0):
        problems.append(f"ApiVersions v0 after DescribeAcls: unexpected reply {frame!r}")
    sock.close()

    sock = connect(bootstrap)
    request(sock, 0x7FFF, 0, 4)
    try:
        frame = response(sock)
    except (ConnectionResetError, socket.timeout) as e:
        frame = None if isinstance(e, ConnectionResetError) else b"timeout"
    if frame is not None:
        problems.append(f"unknown api key: expected the connection closed, got {frame!r}")
    else:
        print("edge: unknown api key 32767 -> connection closed")
    sock.close()

    for p in problems:
        print(f"edge: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
