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

    public var description: String { rawValue }

    /// Interns the common methods so the parser does not allocate a String for them.
    static func from(bytes: UnsafeRawBufferPointer) -> HTTPMethod {
        switch bytes.count {
        case 3:
            if bytes[0] == 0x47, bytes[1] == 0x45, bytes[2] == 0x54 { return .GET }
            if bytes[0] == 0x50, bytes[1] == 0x55, bytes[2] == 0x54 { return .PUT }
        case 4:
            if bytes[0] == 0x50, bytes[1] == 0x4F, bytes[2] == 0x53, bytes[3] == 0x54 { return .POST }
            if bytes[0] == 0x48, bytes[1] == 0x45, bytes[2] == 0x41, bytes[3] == 0x44 { return .HEAD }
        case 5:
            if bytes.elementsEqual("PATCH".utf8) { return .PATCH }
        case 6:
            if bytes.elementsEqual("DELETE".utf8) { return .DELETE }
        case 7:
            if bytes.elementsEqual("OPTIONS".utf8) { return .OPTIONS }
        default: break
        }
        return HTTPMethod(String(decoding: bytes, as: UTF8.self))
    }
}
