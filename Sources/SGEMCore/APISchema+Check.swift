import SGEMSupport

extension APISchema {
    /// Where `value` departs from `schema`, one line per difference ("request.history[0].note:
    /// null but not nullable"); empty when it fits. Objects must carry exactly the documented
    /// properties (every required one among them), and types, nullability, enums and array items
    /// are checked all the way down; `$ref`s are not followed. Lets a test hold an `Encodable`
    /// response type and the schema documented beside its route to one another.
    public static func mismatches(_ value: JSONValue, against schema: JSONValue, at path: String = "") -> [String] {
        let here = path.isEmpty ? "(root)" : path
        if schema["$ref"] != nil { return [] }
        if value == .null { return schema["nullable"] == true ? [] : ["\(here): null but not nullable"] }
        if let options = schema["enum"]?.arrayValue, !options.contains(value) { return ["\(here): \(value.serialized()) not in the enum"] }
        switch schema["type"]?.stringValue {
        case "object"?:
            guard let pairs = value.objectValue else { return ["\(here): not an object"] }
            let properties = schema["properties"]?.objectValue ?? []
            let keys = Set(pairs.map(\.0)), documented = Set(properties.map(\.0))
            var out = keys.subtracting(documented).sorted().map { "\(here): \($0) is not documented" }
            out += documented.subtracting(keys).sorted().map { "\(here): \($0) is documented but absent" }
            for name in schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where !documented.contains(name) {
                out.append("\(here): required \(name) is not a property")
            }
            for (name, sub) in properties { if let v = value[name] { out += mismatches(v, against: sub, at: path.isEmpty ? name : "\(path).\(name)") } }
            return out
        case "array"?:
            guard let items = value.arrayValue else { return ["\(here): not an array"] }
            return items.enumerated().flatMap { mismatches($1, against: schema["items"] ?? [:], at: "\(path)[\($0)]") }
        case "integer"?:
            guard let n = value.numberValue, n == n.rounded() else { return ["\(here): not an integer"] }
        case "number"?:
            if value.numberValue == nil { return ["\(here): not a number"] }
        case "string"?:
            if value.stringValue == nil { return ["\(here): not a string"] }
        case "boolean"?:
            if value.boolValue == nil { return ["\(here): not a boolean"] }
        default:
            break
        }
        return []
    }
}
