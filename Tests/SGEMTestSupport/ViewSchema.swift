import SGEMCore
import SGEMSupport

/// Where an encoded view departs from the OpenAPI schema documented for it: what
/// `APISchema.mismatches` finds (keys, types, nulls), and a line wherever an object's keys are not
/// in the order its schema lists them (the contract's order, which `OrderedJSONEncoder` keeps),
/// all the way down. Empty when the view fits.
public func viewMismatches(_ value: JSONValue, against schema: JSONValue) -> [String] {
    APISchema.mismatches(value, against: schema) + orderMismatches(value, schema, "")
}

private func orderMismatches(_ value: JSONValue, _ schema: JSONValue, _ path: String) -> [String] {
    if let pairs = value.objectValue, let properties = schema["properties"]?.objectValue {
        let documented = properties.map(\.0)
        let keys = pairs.map(\.0).filter(documented.contains)
        var out = keys == documented.filter(keys.contains) ? [] : ["\(path.isEmpty ? "(root)" : path): keys out of the documented order"]
        for (name, sub) in properties {
            if let v = value[name] { out += orderMismatches(v, sub, path.isEmpty ? name : "\(path).\(name)") }
        }
        return out
    }
    if let items = value.arrayValue, let item = schema["items"] {
        return items.enumerated().flatMap { orderMismatches($1, item, "\(path)[\($0)]") }
    }
    return []
}
