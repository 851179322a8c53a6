import SGEMSupport
import Synchronization

/// The `Date` header value (RFC 9110 §5.6.7 IMF-fixdate), formatted once per second and shared.
enum HTTPDate {
    private static let cache = Mutex<(second: Int64, bytes: [UInt8])>((-1, []))
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Appends `Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n` for the current second to `out`
    /// (copied under the lock: no array handed out per response).
    static func appendHeaderLine(to out: inout ByteWriter) {
        let now = Timestamp.now().seconds
        cache.withLock { c in
            if c.second != now {
                c = (now, Array("Date: \(format(now))\r\n".utf8))
            }
            out.append(c.bytes)
        }
    }

    /// IMF-fixdate for `seconds` since the epoch.
    static func format(_ seconds: Int64) -> String {
        let t = CivilTime(unixSeconds: seconds)
        let dayNumber = Int(seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400)
        let weekday = ((dayNumber % 7) + 7 + 4) % 7   // 1970-01-01 was a Thursday
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(days[weekday]), \(two(t.day)) \(months[t.month - 1]) \(t.year) \(two(t.hour)):\(two(t.minute)):\(two(t.second)) GMT"
    }
}
