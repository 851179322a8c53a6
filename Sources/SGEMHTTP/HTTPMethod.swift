/// An HTTP request method, compared exactly (methods are case-sensitive).
public struct HTTPMethod: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// A method from its token, e.g. `"GET"`.
    public init(_ raw: String) { self.rawValue = raw }

    /// The standard methods the router knows by name.
    public static let GET = HTTPMethod("GET")
    public static let HEAD = HTTPMethod("HEAD")
    public static let POST = HTTPMethod("POST")
    public static let PUT = HTTPMethod("PUT")
    public static let PATCH = HTTPMethod("PATCH")
    public static let DELETE = HTTPMethod("DELETE")
    public static let OPTIONS = HTTPMethod("OPTIONS")
    /// Standard methods no route serves: they are recognised (405 with `Allow`, as RFC 9110
    /// §15.5.6 asks for a known method the resource does not support), never implemented.
    public static let TRACE = HTTPMethod("TRACE")
    public static let CONNECT = HTTPMethod("CONNECT")
    public static let QUERY = HTTPMethod("QUERY")

    public var description: String { rawValue }

    /// The methods the server recognises; any other token is answered 501 by the parser, so a
    /// client-chosen name never reaches the router or becomes a metrics label.
    public static let known: [HTTPMethod] = [.GET, .HEAD, .POST, .PUT, .PATCH, .DELETE, .OPTIONS, .TRACE, .CONNECT, .QUERY]

    /// The longest known method name; a longer token is refused without being looked at further.
    static let maxLength = 7

    /// One of the known methods from its token (no String is allocated), or nil.
    static func from(bytes: UnsafeRawBufferPointer) -> HTTPMethod? {
        switch bytes.count {
        case 3:
            if bytes[0] == 0x47, bytes[1] == 0x45, bytes[2] == 0x54 { return .GET }
            if bytes[0] == 0x50, bytes[1] == 0x55, bytes[2] == 0x54 { return .PUT }
        case 4:
            if bytes[0] == 0x50, bytes[1] == 0x4F, bytes[2] == 0x53, bytes[3] == 0x54 { return .POST }
            if bytes[0] == 0x48, bytes[1] == 0x45, bytes[2] == 0x41, bytes[3] == 0x44 { return .HEAD }
        case 5:
            if bytes.elementsEqual("PATCH".utf8) { return .PATCH }
            if bytes.elementsEqual("TRACE".utf8) { return .TRACE }
            if bytes.elementsEqual("QUERY".utf8) { return .QUERY }
        case 6:
            if bytes.elementsEqual("DELETE".utf8) { return .DELETE }
        case 7:
            if bytes.elementsEqual("OPTIONS".utf8) { return .OPTIONS }
            if bytes.elementsEqual("CONNECT".utf8) { return .CONNECT }
        default: break
        }
        return nil
    }
}
