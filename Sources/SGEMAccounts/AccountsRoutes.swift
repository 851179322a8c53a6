import SGEMContracts
import SGEMCore
import SGEMHTTP

/// The Accounts section of the API (`/api/v1/auth`, `/me`, `/users`, `/invites`, `/admin/users`,
/// `/admin/invites`, `/admin/audit`): one controller per area, behind the edge that answers the
/// module's domain errors as the API's.
struct AccountsRoutes: Sendable {
    let runtime: AccountsRuntime

    func register(_ routes: RouteGroup) {
        let accounts = routes.group("", middleware: [AccountsErrorMapping()])
        let controllers: [any AccountsController] = [
            SessionsController(runtime: runtime), InvitesController(runtime: runtime), ProfileController(runtime: runtime),
            DirectoryController(runtime: runtime), UserAdminController(runtime: runtime), AuditController(runtime: runtime),
        ]
        for controller in controllers { controller.register(accounts) }
    }
}
