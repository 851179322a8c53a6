#if canImport(Glibc)
import Glibc
#endif

/// How links the server prints name the server (the setup link at start, `admin invite create`).
public enum ServerAddress {
    /// `host` as a link names it: this machine's name when `host` listens on every address
    /// (`0.0.0.0`, `::`, empty), 127.0.0.1 when the machine has no name; IPv6 literals in brackets.
    public static func linkHost(_ host: String) -> String {
        var shown = host
        if host == "0.0.0.0" || host == "::" || host.isEmpty {
            var name = [CChar](repeating: 0, count: 256)
            shown = gethostname(&name, name.count - 1) == 0
                ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
            if shown.isEmpty { shown = "127.0.0.1" }
        }
        return shown.contains(":") ? "[\(shown)]" : shown
    }
}
