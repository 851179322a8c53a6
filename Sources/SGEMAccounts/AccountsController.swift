import SGEMCore
import SGEMHTTP

/// One area of the accounts API: it lists its routes in `register(_:)`, one method per endpoint.
protocol AccountsController: Sendable {
    var runtime: AccountsRuntime { get }
    /// Adds the area's routes to `routes`, the accounts slice of `/api/v1`.
    func register(_ routes: RouteGroup)
}

extension AccountsController {
    var service: AccountService { runtime.service }

    /// `routes` for logged-in users; with `whilePasswordChangeRequired`, also for those who must
    /// first choose their own password (see `AccountsAPI.passwordChangeRequiredDoc`).
    func users(_ routes: RouteGroup, whilePasswordChangeRequired: Bool = false) -> RouteGroup {
        routes.group("", middleware: [RequireUser(services: runtime.registry, whilePasswordChangeRequired: whilePasswordChangeRequired)])
    }

    /// `routes` under `/admin`, for admins.
    func admins(_ routes: RouteGroup) -> RouteGroup {
        routes.group("/admin", middleware: [RequireAdmin(services: runtime.registry)])
    }
}
