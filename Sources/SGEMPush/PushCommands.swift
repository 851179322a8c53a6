import SGEMCore
import SGEMShell
import SGEMSupport

/// `admin push encryption-cost [--count N] [--json]`: what encrypting one push costs on this
/// machine (RFC 8291: a fresh P-256 key, ECDH, HKDF, AES-128-GCM) and signing one VAPID token,
/// in microseconds; the push benchmark reads it. Touches no database.
struct PushCommands: Sendable {
    func register(_ commands: inout CommandRegistry) {
        var verbs = CommandRegistry(noun: "push verb", helpHint: "admin push --help")
        verbs.register(Command("encryption-cost", summary: "measure the microseconds one push's encryption and one VAPID signature take here",
                               usage: "[--count N] [--json]",
                               options: [.value("count", "N", "pushes to encrypt (1 to 1000000, default 2000)"), .flag("json", "print JSON")]) { args, ctx in
            let count = try args.int("count", default: 2000, in: 1...1_000_000)
            let (encrypt, sign) = try PushCommands.measure(count: count)
            if args.has("json") {
                ctx.io.print(JSONValue.object([("count", .number(Double(count))), ("encryptMicros", .number(encrypt)),
                                               ("signMicros", .number(sign))]).serialized())
            } else {
                ctx.io.print("encrypting one push: \(PushCommands.oneDecimal(encrypt)) µs (over \(count))")
                ctx.io.print("signing one VAPID token: \(PushCommands.oneDecimal(sign)) µs")
            }
        })
        let all = verbs
        commands.register(Command("push", summary: "Web Push tools: measure the cost of encrypting a push",
                                  usage: "encryption-cost [--count N] [--json]", positionals: 0...100, passThrough: true) { args, ctx in
            try await all.run(args.positionals, context: ctx, prefix: "sgem-server admin push")
        })
    }

    static func oneDecimal(_ x: Double) -> String {
        let tenths = Int((x * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// Mean microseconds per encryption of a typical payload for one device, and per ES256 token.
    static func measure(count: Int) throws -> (encrypt: Double, sign: Double) {
        let device = try P256KeyPair.generate()
        let auth = Crypto.randomBytes(16)
        let payload = Array(PushPayload(kind: .message, title: "Lucía López · Equipo de ventas",
                                        body: String(repeating: "¿Nos vemos mañana a las diez para repasar el presupuesto? ", count: 4),
                                        url: "#/chat?id=42", tag: "chat-42").json.serialized().utf8)
        var start = MonotonicClock.nanoseconds()
        for _ in 0..<count { _ = try WebPushCrypto.encrypt(payload, p256dh: device.publicKey, auth: auth) }
        let encrypt = Double(MonotonicClock.nanoseconds() - start) / Double(count) / 1000
        let keys = try P256KeyPair.generate()
        let signs = max(1, count / 4)
        start = MonotonicClock.nanoseconds()
        for i in 0..<signs { _ = try VAPID.token(audience: "https://push.example.net", subject: "mailto:a@b.c", expires: Int64(i), keys: keys) }
        let sign = Double(MonotonicClock.nanoseconds() - start) / Double(signs) / 1000
        return (encrypt, sign)
    }
}
