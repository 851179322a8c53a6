#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import SGEMSupport
import Synchronization

/// scrypt cost parameters: N = 2^logN, block size r, parallelism p.
struct ScryptParameters: Sendable, Equatable {
    var logN: Int
    var r: Int = 8
    var p: Int = 1

    /// Work of one derivation, up to a constant: N · r · p.
    var cost: UInt64 { (UInt64(1) << UInt64(logN)) * UInt64(r) * UInt64(p) }

    /// Whether `PasswordHasher.scrypt` accepts these parameters.
    var isUsable: Bool { (1...24).contains(logN) && (1...32).contains(r) && (1...16).contains(p) }
}

/// A password-hashing failure (OpenSSL refused the parameters or ran out of memory).
struct PasswordHashError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// scrypt password hashing through OpenSSL's `EVP_PBE_scrypt`. Hashes are self-describing
/// strings, `scrypt$17$8$1$<salt base64>$<key base64>`, so old hashes keep verifying after the
/// cost changes and are upgraded at the next login. Every derivation runs on the hasher's own
/// threads — never on Swift's cooperative pool — so at most one hash per thread runs at a time;
/// the queue in front of them is bounded and fair between clients (`HashScheduler`), so a flood
/// from one address is refused with 503 `busy` instead of stalling everyone's logins.
final class PasswordHasher: Sendable {
    static let saltBytes = 16
    static let keyBytes = 32
    /// Longest password accepted: scrypt pre-hashes with PBKDF2, but unbounded input is still work.
    static let maxPasswordBytes = 1024

    /// The client that work from the command line is queued as.
    static let commandLineClient = "command line"

    let parameters: ScryptParameters
    let pool: BlockingPool
    let scheduler: HashScheduler
    /// Verified against when the user does not exist, so that answer takes as long as a wrong
    /// password: made with the parameters of the most expensive stored hash known (`dummyCost`).
    private let dummy: Mutex<(parameters: ScryptParameters, hash: String)>
    let timings: Histogram

    /// - Parameters:
    ///   - queueCapacity: most hashes waiting for a thread; more are refused (`AccountsError.hasherBusy`).
    ///   - perClient: most hashes one client may have waiting or running.
    init(logN: Int, threads: Int, queueCapacity: Int = 64, perClient: Int = 8, metrics: MetricsRegistry = .shared) {
        parameters = ScryptParameters(logN: logN)
        pool = BlockingPool(name: "hash", threads: threads)
        scheduler = HashScheduler(capacity: queueCapacity, perClient: perClient)
        dummy = Mutex((parameters, PasswordHasher.dummyHash(parameters)))
        timings = metrics.histogram("sgem_accounts_password_hash_seconds", help: "Time to derive one scrypt password hash.",
                                    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5])
    }

    /// One thread per online CPU: at most one hash per core at a time.
    static var cpuCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// A new hash of `password` with the configured parameters and a fresh salt, queued as `client`.
    func hash(_ password: String, for client: String) async throws -> String {
        let params = parameters
        let salt = Crypto.randomBytes(Self.saltBytes)
        let key = try await derive(Array(password.utf8), salt: salt, params, client: client)
        raiseDummyCost(to: params)
        return PasswordHasher.format(params, salt: salt, key: key)
    }

    /// Whether `password` matches `stored`, queued as `client`. A malformed stored hash never
    /// matches, but still costs one derivation so that the caller's timing does not tell.
    func verify(_ password: String, against stored: String, for client: String) async throws -> Bool {
        guard let parsed = PasswordHasher.parse(stored) else {
            _ = try await verify(password, against: dummyHash, for: client)
            return false
        }
        // A hash stored by another process may cost more than any this one has seen.
        raiseDummyCost(to: parsed.parameters)
        let key = try await derive(Array(password.utf8), salt: parsed.salt, parsed.parameters, client: client)
        return Crypto.constantTimeEqual(key, parsed.key)
    }

    /// Whether `stored` was made with other parameters than the configured ones: weaker ones are
    /// upgraded, and costlier ones brought down so the dummy hash can follow (`dummyCost`).
    func needsRehash(_ stored: String) -> Bool {
        guard let parsed = PasswordHasher.parse(stored) else { return true }
        return parsed.parameters != parameters
    }

    // MARK: The dummy hash

    /// The hash an unknown user's password is checked against.
    var dummyHash: String { dummy.withLock { $0.hash } }

    /// The dummy hash's parameters.
    var dummyCost: ScryptParameters { dummy.withLock { $0.parameters } }

    /// Makes the dummy hash cost at least what `stored` costs (a hash this process wrote or read).
    func raiseDummyCost(to stored: ScryptParameters) {
        guard stored.isUsable else { return }
        dummy.withLock { d in
            if stored.cost > d.parameters.cost { d = (stored, PasswordHasher.dummyHash(stored)) }
        }
    }

    /// Sets the dummy hash's parameters to `stored`, those of the most expensive hash stored now
    /// (nil: none stored; the configured ones), lowering them once costlier hashes are gone.
    func setDummyCost(_ stored: ScryptParameters?) {
        let wanted = stored.flatMap { $0.isUsable ? $0 : nil } ?? parameters
        dummy.withLock { d in
            if wanted != d.parameters { d = (wanted, PasswordHasher.dummyHash(wanted)) }
        }
    }

    private static func dummyHash(_ parameters: ScryptParameters) -> String {
        format(parameters, salt: Crypto.randomBytes(saltBytes), key: Crypto.randomBytes(keyBytes))
    }

    /// Stops the hashing threads after queued work.
    func shutdown() { pool.shutdown() }

    /// Queues one derivation with the scheduler and hands the pool one turn to serve it; the turn
    /// runs whichever client's job is next, which is what makes the queue fair.
    private func derive(_ password: [UInt8], salt: [UInt8], _ params: ScryptParameters, client: String) async throws -> [UInt8] {
        let timings = self.timings
        let scheduler = self.scheduler
        return try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<[UInt8], any Error>) in
            let job = HashScheduler.Job(run: {
                PasswordHasher.lowerThreadPriority()
                let started = MonotonicClock.nanoseconds()
                do {
                    let key = try PasswordHasher.scrypt(password, salt: salt, params)
                    timings.observe(Double(MonotonicClock.nanoseconds() &- started) / 1e9)
                    continuation.resume(returning: key)
                } catch {
                    continuation.resume(throwing: error)
                }
            }, cancel: { continuation.resume(throwing: $0) })
            do {
                try scheduler.add(job, client: client)
            } catch {
                continuation.resume(throwing: error)
                return
            }
            if !pool.execute({ scheduler.runNext() }) {
                // The threads are gone: nothing will serve the queue, so answer everything in it.
                scheduler.close(cancelling: BlockingPoolStopped(name: pool.name))
            }
        }
    }

    /// Hashing threads run at nice 10: when requests and logins compete for a core, requests win
    /// and logins take the rest. Applies to the calling thread only (Linux per-thread niceness);
    /// repeated calls are a cheap no-op. Failure only means normal priority.
    static func lowerThreadPriority() {
        // On Linux, PRIO_PROCESS with who = 0 names the calling thread, not the whole process.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
    }

    /// The raw derivation; blocking (≈ 128 · r · N bytes of memory and a CPU-bound loop).
    static func scrypt(_ password: [UInt8], salt: [UInt8], _ params: ScryptParameters) throws -> [UInt8] {
        guard params.isUsable else {
            throw PasswordHashError(message: "scrypt parameters out of range: logN \(params.logN), r \(params.r), p \(params.p)")
        }
        let n = UInt64(1) << UInt64(params.logN)
        // OpenSSL refuses work above maxmem (32 MiB by default); allow what these parameters need.
        let maxmem = 128 * UInt64(params.r) * (n + UInt64(params.p) + 2) + (1 << 20)
        var key = [UInt8](repeating: 0, count: keyBytes)
        let rc = password.withUnsafeBufferPointer { pw in
            salt.withUnsafeBufferPointer { s in
                key.withUnsafeMutableBufferPointer { k in
                    pw.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(pw.count, 1)) { pwChars in
                        EVP_PBE_scrypt(password.isEmpty ? nil : pwChars, pw.count, s.baseAddress, s.count,
                                       n, UInt64(params.r), UInt64(params.p), maxmem, k.baseAddress, k.count)
                    }
                }
            }
        }
        guard rc == 1 else {
            throw PasswordHashError(message: "EVP_PBE_scrypt failed (logN \(params.logN), r \(params.r), p \(params.p)): \(Crypto.openSSLErrors().joined(separator: "; "))")
        }
        return key
    }

    static func format(_ p: ScryptParameters, salt: [UInt8], key: [UInt8]) -> String {
        "scrypt$\(p.logN)$\(p.r)$\(p.p)$\(Crypto.base64(salt))$\(Crypto.base64(key))"
    }

    /// Characters after the parameters in a stored hash: `$<salt base64>$<key base64>`.
    static let saltAndKeyLength = 2 + (saltBytes + 2) / 3 * 4 + (keyBytes + 2) / 3 * 4

    /// The parameters of `scrypt$logN$r$p`, a stored hash without `saltAndKeyLength` characters.
    static func parseParameters(_ prefix: String) -> ScryptParameters? {
        let parts = prefix.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "scrypt", let logN = Int(parts[1]), let r = Int(parts[2]), let p = Int(parts[3]) else { return nil }
        return ScryptParameters(logN: logN, r: r, p: p)
    }

    static func parse(_ stored: String) -> (parameters: ScryptParameters, salt: [UInt8], key: [UInt8])? {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0] == "scrypt",
              let logN = Int(parts[1]), let r = Int(parts[2]), let p = Int(parts[3]),
              let salt = Crypto.base64Decode(parts[4]), let key = Crypto.base64Decode(parts[5]), !salt.isEmpty, key.count == keyBytes
        else { return nil }
        return (ScryptParameters(logN: logN, r: r, p: p), salt, key)
    }
}
