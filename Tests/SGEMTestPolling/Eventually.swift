// The one way tests wait for something to happen: poll a condition until it holds, never sleep a
// fixed time and hope. Its own target, with no dependencies, so every test target can use it
// (SGEMTestSupport re-exports it).

/// Polls `condition` until it holds or `seconds` pass; returns whether it held. The deadline only
/// bounds a failing test: a passing one returns as soon as the condition holds. Polls every
/// millisecond at first, backing off to every 10 ms, so a long wait costs the machine little.
public func eventually(_ seconds: Double = 60, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + .milliseconds(Int(seconds * 1000))
    var pause = Duration.milliseconds(1)
    while clock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: pause)
        pause = min(pause * 2, .milliseconds(10))
    }
    return try await condition()
}
