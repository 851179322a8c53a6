/// Describes one `--option` a command accepts.
public struct OptionSpec: Sendable {
    public let name: String
    public let valueName: String?     // nil for a boolean flag
    public let help: String

    /// An option that takes a value: `--name VALUE` or `--name=VALUE`.
    public static func value(_ name: String, _ valueName: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: valueName, help: help)
    }

    /// A boolean flag: `--name`.
    public static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: nil, help: help)
    }
}

/// A command line split into options and positional arguments, checked against the specs.
public struct ParsedArguments: Sendable {
    public private(set) var options: [String: String] = [:]
    public private(set) var flags: Set<String> = []
    public private(set) var positionals: [String] = []

    public init(_ arguments: [String], specs: [OptionSpec]) throws(CommandError) {
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let arg = arguments[index]
            index += 1
            if onlyPositionals || !arg.hasPrefix("--") || arg == "-" {
                if !onlyPositionals, arg.hasPrefix("-"), arg.count > 1, arg != "-" {
                    throw .usage("unknown option '\(arg)'")
                }
                positionals.append(arg)
                continue
            }
            if arg == "--" { onlyPositionals = true; continue }
            var name = String(arg.dropFirst(2))
            var inlineValue: String?
            if let eq = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            guard let spec = specs.first(where: { $0.name == name }) else {
                throw .usage("unknown option '--\(name)'")
            }
            if let valueName = spec.valueName {
                if let inlineValue {
                    options[name] = inlineValue
                } else {
                    guard index < arguments.count, !arguments[index].hasPrefix("--") else {
                        throw .usage("option '--\(name)' needs a value (\(valueName))")
                    }
                    options[name] = arguments[index]
                    index += 1
                }
            } else {
                guard inlineValue == nil else { throw .usage("option '--\(name)' takes no value") }
                flags.insert(name)
            }
        }
    }

    public func value(_ name: String) -> String? { options[name] }
    public func has(_ name: String) -> Bool { flags.contains(name) || options[name] != nil }

    /// The value of a required option.
    public func require(_ name: String) throws(CommandError) -> String {
        guard let v = options[name], !v.isEmpty else { throw .usage("missing required option '--\(name)'") }
        return v
    }

    /// An integer option within `range`, or `defaultValue` when absent.
    public func int(_ name: String, default defaultValue: Int, in range: ClosedRange<Int>) throws(CommandError) -> Int {
        guard let raw = options[name] else { return defaultValue }
        guard let v = Int(raw), range.contains(v) else {
            throw .usage("option '--\(name)' must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return v
    }
}

/// Splits a line into words the way a shell would for simple cases: whitespace separates,
/// single and double quotes group, backslash escapes the next character.
public func splitCommandLine(_ line: String) throws(CommandError) -> [String] {
    var words: [String] = []
    var current = ""
    var inWord = false
    var quote: Character?
    var escaping = false
    for ch in line {
        if escaping { current.append(ch); escaping = false; inWord = true; continue }
        if ch == "\\" && quote != "'" { escaping = true; inWord = true; continue }
        if let q = quote {
            if ch == q { quote = nil } else { current.append(ch) }
            continue
        }
        if ch == "\"" || ch == "'" { quote = ch; inWord = true; continue }
        if ch == " " || ch == "\t" {
            if inWord { words.append(current); current = ""; inWord = false }
            continue
        }
        current.append(ch)
        inWord = true
    }
    if quote != nil { throw .usage("unterminated quote") }
    if escaping { throw .usage("line ends with a backslash") }
    if inWord { words.append(current) }
    return words
}
