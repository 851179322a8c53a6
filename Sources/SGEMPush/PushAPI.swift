import SGEMCore
import SGEMHTTP
import SGEMSupport

/// What the push controller shares with its tests: the body cap and the OpenAPI schemas of the
/// answers (each checked against its `Encodable` view by `ViewSchemaTests`).
enum PushAPI {
    static let maxBody = 8 * 1024

    static let keySchema = APISchema.object(["publicKey": APISchema.string], required: ["publicKey"])

    /// `SubscriptionView`.
    static let subscriptionSchema = APISchema.object(["id": APISchema.integer, "endpoint": APISchema.string, "createdAt": APISchema.dateTime],
                                                     required: ["id", "endpoint", "createdAt"])

    /// `SubscriptionListView`.
    static let listSchema = APISchema.object(["items": APISchema.array(subscriptionSchema)], required: ["items"])
}
