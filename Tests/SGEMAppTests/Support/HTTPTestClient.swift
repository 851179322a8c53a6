#if canImport(Glibc)
import Glibc
#endif

/// A response as read off the wire.
struct WireResponse {
    let status: Int
    let headers: [(String, String)]
    let body: [UInt8]
    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// One blocking HTTP/1.1 exchange over a new connection (`Connection: close`), with a timeout.
func httpRequest(port: Int, method: String = "GET", path: String, headers: [(String, String)] = [],
                 body: [UInt8] = [], timeout: Int = 10) throws -> WireResponse {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket failed") }
    defer { close(fd) }
    var tv = timeval(tv_sec: timeout, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = in_port_t(UInt16(port).bigEndian)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    let ok = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard ok == 0 else { throw TestFailure("connect to \(port) failed: errno \(errno)") }
    var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
    for (k, v) in headers { head += "\(k): \(v)\r\n" }
    if !body.isEmpty || method == "POST" || method == "PUT" || method == "PATCH" { head += "Content-Length: \(body.count)\r\n" }
    head += "\r\n"
    let request = Array(head.utf8) + body
    var sent = 0
    while sent < request.count {
        let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard n > 0 else { throw TestFailure("send failed: errno \(errno)") }
        sent += n
    }
    var data: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 { throw TestFailure("recv failed or timed out: errno \(errno)") }
        if n == 0 { break }
        data += chunk[0..<n]
    }
    return try parseResponse(data, headRequest: method == "HEAD")
}

func parseResponse(_ data: [UInt8], headRequest: Bool = false) throws -> WireResponse {
    guard let end = findHeaderEnd(data) else { throw TestFailure("no complete response head: \(String(decoding: data, as: UTF8.self))") }
    let head = String(decoding: data[0..<end], as: UTF8.self)
    var lines = head.splitCRLF()
    let statusLine = lines.removeFirst()
    let parts = statusLine.split(separator: " ")
    guard parts.count >= 2, let status = Int(parts[1]) else { throw TestFailure("bad status line \(statusLine)") }
    let headers = lines.compactMap { line -> (String, String)? in
        guard let colon = line.firstIndex(of: ":") else { return nil }
        return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingSpaces())
    }
    var body = Array(data[(end + 4)...])
    if let cl = headers.first(where: { $0.0.lowercased() == "content-length" }), let n = Int(cl.1), !headRequest {
        body = Array(body.prefix(n))
    }
    return WireResponse(status: status, headers: headers, body: body)
}

func findHeaderEnd(_ data: [UInt8]) -> Int? {
    guard data.count >= 4 else { return nil }
    for i in 0...(data.count - 4) where data[i] == 13 && data[i + 1] == 10 && data[i + 2] == 13 && data[i + 3] == 10 { return i }
    return nil
}

extension String {
    func splitCRLF() -> [String] {
        var out: [String] = []
        var current = ""
        var previousCR = false
        for ch in self.unicodeScalars {
            if ch == "\r" { previousCR = true; continue }
            if ch == "\n" && previousCR { out.append(current); current = ""; previousCR = false; continue }
            previousCR = false
            current.unicodeScalars.append(ch)
        }
        out.append(current)
        return out
    }

    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }
}
