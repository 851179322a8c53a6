#if canImport(Glibc)
import Glibc
#endif
import CTestSupport
import SGEMTestSupport

/// A child process with piped stdin, stdout and stderr, for driving the real binary.
final class Subprocess: @unchecked Sendable {   // used from one test at a time
    let pid: pid_t
    private let stdinFD: Int32
    private let stdoutFD: Int32
    private let stderrFD: Int32
    private var inputClosed = false
    private var outBuffer: [UInt8] = []
    private var errBuffer: [UInt8] = []
    private(set) var exitStatus: Int32?

    /// The built `sgem-server`, next to the test bundle.
    static var binary: String {
        let me = CommandLine.arguments[0]
        var dir = String(me[..<(me.lastIndex(of: "/") ?? me.startIndex)])
        if dir.hasSuffix(".xctest") { dir = String(dir[..<(dir.lastIndex(of: "/") ?? dir.startIndex)]) }
        return dir + "/sgem-server"
    }

    /// Starts `executable` (the server binary unless given) with `arguments`.
    init(_ arguments: [String], environment: [String: String] = [:], executable: String = Subprocess.binary) throws {
        var inPipe: [Int32] = [0, 0], outPipe: [Int32] = [0, 0], errPipe: [Int32] = [0, 0]
        // Close-on-exec from the start, so other tests' children never inherit these pipes (they
        // would hold them open and hide EOF); dup2 onto 0, 1 and 2 clears it for this child.
        guard sgem_test_pipe_cloexec(&inPipe) == 0, sgem_test_pipe_cloexec(&outPipe) == 0, sgem_test_pipe_cloexec(&errPipe) == 0 else {
            throw TestFailure("pipe failed")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        // Nothing else reaches the child: the tests of this suite run side by side, and a socket
        // or pipe another test opened without close-on-exec would otherwise be inherited (a
        // server started under `ulimit -n 40` then ran out of descriptors before listening).
        sgem_test_spawn_closefrom(&actions, 3)
        let argv = [executable] + arguments
        var env = ["PATH=/usr/bin:/bin"]
        for (k, v) in environment { env.append("\(k)=\(v)") }
        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = env.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) }; for p in cEnv { free(p) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, nil, cArgs, cEnv)
        close(inPipe[0]); close(outPipe[1]); close(errPipe[1])
        guard rc == 0 else { throw TestFailure("posix_spawn \(executable) failed: \(rc)") }
        pid = child
        stdinFD = inPipe[1]
        stdoutFD = outPipe[0]
        stderrFD = errPipe[0]
        _ = fcntl(stdoutFD, F_SETFL, fcntl(stdoutFD, F_GETFL) | O_NONBLOCK)
        _ = fcntl(stderrFD, F_SETFL, fcntl(stderrFD, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        if exitStatus == nil { kill(pid, SIGKILL); var s: Int32 = 0; waitpid(pid, &s, 0) }
        if !inputClosed { close(stdinFD) }
        close(stdoutFD); close(stderrFD)
    }

    func writeInput(_ text: String) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { _ = write(stdinFD, $0.baseAddress, $0.count) }
    }

    func closeInput() {
        if !inputClosed { close(stdinFD); inputClosed = true }
    }

    /// Reads whatever is available on stdout and stderr, waiting up to `ms` for something.
    private func pump(ms: Int32) {
        var fds = [pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0), pollfd(fd: stderrFD, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, 2, ms)
        var chunk = [UInt8](repeating: 0, count: 65536)
        for (fd, isOut) in [(stdoutFD, true), (stderrFD, false)] {
            while true {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                if isOut { outBuffer += chunk[0..<n] } else { errBuffer += chunk[0..<n] }
            }
        }
    }

    var stdout: String { pump(ms: 0); return String(decoding: outBuffer, as: UTF8.self) }
    var stderr: String { pump(ms: 0); return String(decoding: errBuffer, as: UTF8.self) }

    /// Waits until stdout contains `text`, or fails after `seconds`.
    @discardableResult
    func waitForOutput(_ text: String, seconds: Double = 20) throws -> String {
        let deadline = now() + seconds
        while now() < deadline {
            pump(ms: 50)
            let s = String(decoding: outBuffer, as: UTF8.self)
            if s.contains(text) { return s }
            if hasExited() { break }
        }
        throw TestFailure("did not print '\(text)'; stdout: \(stdout) stderr: \(stderr)")
    }

    func hasExited() -> Bool {
        if exitStatus != nil { return true }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exitStatus = status; return true }
        return false
    }

    /// Waits for the process to end and returns its exit code (128+signal when killed).
    @discardableResult
    func wait(seconds: Double = 30) throws -> Int32 {
        let deadline = now() + seconds
        while !hasExited() {
            if now() > deadline { kill(pid, SIGKILL); throw TestFailure("process did not exit in \(seconds)s; stderr: \(stderr)") }
            pump(ms: 20)
        }
        pump(ms: 0)
        let s = exitStatus!
        return (s & 0x7f) == 0 ? (s >> 8) & 0xff : 128 + (s & 0x7f)
    }

    func signal(_ sig: Int32) { kill(pid, sig) }
}

/// Runs the binary to completion: exit code, stdout, stderr.
func runBinary(_ arguments: [String], input: String? = nil, seconds: Double = 60) throws -> (code: Int32, out: String, err: String) {
    let p = try Subprocess(arguments)
    if let input { p.writeInput(input) }
    p.closeInput()
    let code = try p.wait(seconds: seconds)
    return (code, p.stdout, p.stderr)
}

@discardableResult
func runShell(_ command: String) throws -> Int32 {
    var pid: pid_t = 0
    let argv = ["/bin/sh", "-c", command]
    let cArgs = argv.map { strdup($0) } + [nil]
    defer { for p in cArgs { free(p) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    sgem_test_spawn_closefrom(&actions, 3)   // its standard streams only, as for Subprocess
    guard posix_spawn(&pid, "/bin/sh", &actions, nil, cArgs, environ) == 0 else { throw TestFailure("spawn sh failed") }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    return (status >> 8) & 0xff
}
