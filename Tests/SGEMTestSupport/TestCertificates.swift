#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A test CA and certificates made by the `openssl` CLI in a temporary directory (once per test
/// process by `shared()`, afresh by `make()`): `good` (localhost and 127.0.0.1, from the CA), `wrongHost` (another name),
/// `expired`, and `selfSigned` (right names, but not from the CA).
public struct TestCertificates: Sendable {
    public enum Leaf: String, Sendable, CaseIterable {
        case good, wrongHost = "wronghost", expired, selfSigned = "self"
    }

    public let directory: String
    public var ca: String { directory + "/ca.pem" }
    public func certificate(_ leaf: Leaf) -> String { "\(directory)/\(leaf.rawValue).pem" }
    public func key(_ leaf: Leaf) -> String { "\(directory)/\(leaf.rawValue).key" }

    private static let made = Mutex<TestCertificates?>(nil)

    /// The process's certificates, made on first use.
    public static func shared() throws -> TestCertificates {
        try made.withLock { made in
            if let made { return made }
            let certificates = try make()
            made = certificates
            return certificates
        }
    }

    /// A fresh set in a directory of its own (`remove()` deletes it); most tests want `shared()`.
    public static func make() throws -> TestCertificates {
        let directory = TempDir(prefix: "sgem-test-ca").path
        let script = """
        set -e
        cd \(directory)
        EC="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
        openssl req -x509 $EC -keyout ca.key -out ca.pem -days 2 -subj "/CN=SGEM Test CA"
        leaf() {
          printf "subjectAltName=%s\\n" "$2" > $1.ext
          openssl req $EC -keyout $1.key -out $1.csr -subj "/CN=$1"
          openssl x509 -req -in $1.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out $1.pem -days $3 -extfile $1.ext
        }
        leaf good "DNS:localhost,IP:127.0.0.1" 2
        leaf wronghost "DNS:other.example" 2
        leaf expired "DNS:localhost,IP:127.0.0.1" -1
        openssl req -x509 $EC -keyout self.key -out self.pem -days 2 -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1
        """
        guard let file = fopen(directory + "/make.sh", "w") else { throw TestFailure("cannot write the certificate script") }
        fputs(script, file)
        fclose(file)
        let made = runCommand("sh \(directory)/make.sh")
        guard made.status == 0 else { throw TestFailure("making test certificates failed: \(made.output)") }
        return TestCertificates(directory: directory)
    }

    /// Deletes the directory and everything in it.
    public func remove() { removeTree(directory) }
}

/// Runs a shell command; its exit status and combined output.
public func runCommand(_ command: String) -> (status: Int32, output: String) {
    guard let pipe = popen(command + " 2>&1", "r") else { return (-1, "") }
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = fread(&chunk, 1, chunk.count, pipe)
        if n <= 0 { break }
        output.append(contentsOf: chunk[0..<n])
    }
    let status = pclose(pipe)
    return ((status >> 8) & 0xFF, String(decoding: output, as: UTF8.self))
}
