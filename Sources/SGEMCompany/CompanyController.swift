import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport

/// The company's contact information (`/company`: everyone reads it, admins change it) and its
/// settings (`/admin/settings`, admins only). A change is read, applied and saved in one write
/// transaction with its audit entry, so two admins saving different fields at once both keep
/// their change.
struct CompanyController: Sendable {
    let repository: CompanyRepository
    /// Resolves the audit trail per request: accounts, which keeps it, boots after company.
    let registry: ServiceRegistry
    let logger: Logger

    func register(_ routes: CompanyRouteGroups) {
        routes.signedIn.get("/company", doc: Self.profileDoc, profile)
        routes.admins.put("/company", maxBody: CompanyAPI.maxBody, doc: Self.changeProfileDoc, changeProfile)
        routes.admins.get("/settings", doc: Self.settingsDoc, settings)
        routes.admins.put("/settings", maxBody: CompanyAPI.maxBody, doc: Self.changeSettingsDoc, changeSettings)
    }

    static let profileDoc = RouteDoc(
        summary: "The company's name and contact information", tags: ["company"],
        responses: [ResponseDoc(status: 200, description: "The company", schema: CompanyAPI.profileSchema)],
        authenticated: true)

    func profile(_ request: Request, _ context: RequestContext) async throws -> Response {
        .json(CompanyProfileView(try await repository.profile()))
    }

    static let changeProfileDoc = RouteDoc(
        summary: "Change the company's information (fields left out keep their value; null or \"\" clears)", tags: ["company"],
        requestSchema: CompanyAPI.profileRequestSchema,
        responses: [ResponseDoc(status: 200, description: "The company now", schema: CompanyAPI.profileSchema),
                    ResponseDoc(status: 422, description: "Invalid values, per field in details.fields")],
        authenticated: true)

    func changeProfile(_ request: Request, _ context: RequestContext) async throws -> Response {
        let fields = try CompanyProfileBody(request).fields
        let (trail, actor) = try auditing(request, context)
        let updated = try await repository.updateProfile(audited: { try CompanyAudit.profile($0, $1, by: actor, trail: trail, in: $2) }) {
            current in try current.applying(fields)
        }
        logger.notice("company information changed", ["user.id": String(try context.user().id), "request.id": context.requestID])
        return .json(CompanyProfileView(updated))
    }

    static let settingsDoc = RouteDoc(
        summary: "Company settings", tags: ["company"],
        responses: [ResponseDoc(status: 200, description: "The settings", schema: CompanyAPI.settingsSchema)],
        authenticated: true)

    func settings(_ request: Request, _ context: RequestContext) async throws -> Response {
        .json(SettingsView(try await repository.current()))
    }

    static let changeSettingsDoc = RouteDoc(
        summary: "Change company settings (fields left out keep their value)", tags: ["company"],
        requestSchema: CompanyAPI.settingsRequestSchema,
        responses: [ResponseDoc(status: 200, description: "The settings now", schema: CompanyAPI.settingsSchema),
                    ResponseDoc(status: 422, description: "Invalid values, per field in details.fields")],
        authenticated: true)

    func changeSettings(_ request: Request, _ context: RequestContext) async throws -> Response {
        let change = try SettingsChange(request)
        let (trail, actor) = try auditing(request, context)
        let updated = try await repository.update(audited: { try CompanyAudit.settings($0, $1, by: actor, trail: trail, in: $2) }) {
            current in try change.applied(to: current)
        }
        logger.notice("company settings changed", ["user.id": String(try context.user().id), "request.id": context.requestID])
        return .json(SettingsView(updated))
    }

    /// The audit trail (when accounts keeps one) and the admin making the change.
    func auditing(_ request: Request, _ context: RequestContext) throws -> (trail: (any AuditTrail)?, actor: AuditActor) {
        (registry.resolve((any AuditTrail).self), AuditActor(userID: try context.user().id, ip: request.clientAddress))
    }
}
