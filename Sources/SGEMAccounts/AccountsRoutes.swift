import SGEMCore
import SGEMHTTP

/// The Accounts section of the API (`/api/v1/auth`, `/me`, `/users`, `/invites`, `/admin/users`,
/// `/admin/invites`, `/admin/audit`): one controller per area, behind the edge that answers the
/// module's domain errors as the API's.
struct AccountsRoutes: Sendable {
    let runtime: AccountsRuntime

    func register(_ routes: RouteGroup) {
        let accounts = routes.group("", middleware: [AccountsErrorMapping()])
        SessionsController(runtime: runtime).register(accounts)
        InvitesController(runtime: runtime).register(accounts)
        ProfileController(runtime: runtime).register(accounts)
        DirectoryController(runtime: runtime).register(accounts)
        UserAdminController(runtime: runtime).register(accounts)
        AuditController(runtime: runtime).register(accounts)
    }
}
