@testable import SGEMApp
import SGEMCore
import SGEMStore
import Testing

/// One migration list serves both backends: every id carries a PostgreSQL form, so a database on
/// either backend records the same ids in the same order.
@Suite struct MigrationFormsTests {
    @Test func everyMigrationOfEveryModuleHasAPostgreSQLForm() {
        let all = Application.allMigrations(Configuration(overrides: ["bench-module": "true"]))
        #expect(all.ids.count >= 25, "the list holds every module's migrations: \(all.ids.count)")
        #expect(all.withoutPostgreSQLForm == [], "SQLite only: \(all.withoutPostgreSQLForm)")
        #expect(Set(all.ids).count == all.ids.count, "ids are unique")
    }
}
