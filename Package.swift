// swift-tools-version:6.0
// sgem-server: one binary for a small company's internal communication.
// Built from the Swift toolchain alone; C libraries come from Debian (libsqlite3-dev, libssl-dev, libpq-dev).
import PackageDescription


let package = Package(
    name: "sgem-server",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "sgem-server", targets: ["sgem-server"]),
    ],
    targets: [
        // C boundary: system libraries and a tiny shim for what Glibc does not expose.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibPQ", path: "Sources/CLibPQ", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .target(name: "CLinux", path: "Sources/CLinux"),

        // Platform layers.
        .target(name: "SGEMSupport", dependencies: ["CLinux", "COpenSSL"]),
        .target(name: "SGEMHTTP", dependencies: ["CLinux", "COpenSSL", "SGEMSupport"]),
        .target(name: "SGEMStore", dependencies: ["CLinux", "CSQLite", "CLibPQ", "SGEMSupport"]),
        .target(name: "SGEMShell", dependencies: ["SGEMSupport"]),
        .target(name: "SGEMCore", dependencies: ["SGEMSupport", "SGEMHTTP", "SGEMStore", "SGEMShell"]),
        // What modules publish to one another (services they resolve from the registry and the
        // values those carry), a file per feature, so that Core holds the platform alone.
        .target(name: "SGEMContracts", dependencies: ["SGEMCore", "SGEMHTTP", "SGEMStore", "SGEMSupport"]),
        .target(name: "SGEMConsole", dependencies: ["SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMSupport"]),

        // Modules: each depends on the platform layers and the contracts, never on another module.
        .target(name: "SGEMSystem", dependencies: ["SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMStore", "SGEMShell", "SGEMSupport"]),
        .target(name: "SGEMCompany", dependencies: ["SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMStore", "SGEMShell", "SGEMSupport"]),
        .target(name: "SGEMNotices", dependencies: ["SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMStore", "SGEMShell", "SGEMSupport"]),
        .target(name: "SGEMMessaging", dependencies: ["SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMStore", "SGEMShell", "SGEMSupport", "CSQLite"]),
        .target(name: "SGEMRealtime", dependencies: ["SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMStore", "SGEMShell", "SGEMSupport"]),
        .target(name: "SGEMAccounts", dependencies: ["COpenSSL", "SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMStore", "SGEMShell", "SGEMSupport"]),
        .target(name: "SGEMHolidays", dependencies: ["SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMStore", "SGEMShell", "SGEMSupport"]),
        .target(name: "SGEMTranslation", dependencies: ["SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMStore", "SGEMShell", "SGEMSupport"]),
        .target(name: "SGEMPush", dependencies: ["COpenSSL", "SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMStore", "SGEMShell", "SGEMSupport"]),

        // Assembly and entry point.
        .target(name: "SGEMApp", dependencies: ["CSQLite", "COpenSSL", "SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMStore", "SGEMShell", "SGEMSupport",
                                                "SGEMConsole", "SGEMSystem", "SGEMCompany", "SGEMNotices", "SGEMMessaging", "SGEMRealtime", "SGEMAccounts", "SGEMHolidays", "SGEMTranslation", "SGEMPush"]),
        .executableTarget(name: "sgem-server", dependencies: ["SGEMApp"]),

        // Tests: one target per source target, plus end-to-end tests against the real binary.
        .target(name: "SGEMTestPolling", path: "Tests/SGEMTestPolling"),
        .target(name: "SGEMTestSupport", dependencies: ["COpenSSL", "SGEMTestPolling", "SGEMSupport", "SGEMShell", "SGEMHTTP", "SGEMApp"],
                path: "Tests/SGEMTestSupport"),
        .target(name: "CTestSupport", path: "Tests/CTestSupport"),
        .testTarget(name: "SGEMSupportTests", dependencies: ["SGEMTestPolling", "SGEMSupport"]),
        .testTarget(name: "SGEMHTTPTests", dependencies: ["SGEMTestPolling", "SGEMTestSupport", "SGEMHTTP", "SGEMSupport", "CLinux"]),
        .testTarget(name: "SGEMStoreTests", dependencies: ["SGEMTestPolling", "SGEMTestSupport", "SGEMStore", "SGEMSupport"]),
        .testTarget(name: "SGEMShellTests", dependencies: ["SGEMShell", "SGEMSupport"]),
        .testTarget(name: "SGEMSystemTests", dependencies: ["SGEMTestSupport", "SGEMSystem", "SGEMCore", "SGEMHTTP", "SGEMStore", "SGEMSupport"]),
        .testTarget(name: "SGEMCoreTests", dependencies: ["SGEMTestPolling", "SGEMCore", "SGEMContracts", "SGEMSupport", "SGEMHTTP", "SGEMStore"]),
        .testTarget(name: "SGEMAccountsTests", dependencies: ["SGEMTestSupport", "SGEMAccounts", "SGEMCompany", "SGEMApp", "SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMStore", "SGEMSupport", "SGEMShell"]),
        .testTarget(name: "SGEMNoticesTests", dependencies: ["SGEMTestSupport", "SGEMNotices", "SGEMAccounts", "SGEMCompany", "SGEMApp", "SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMStore", "SGEMSupport", "SGEMShell"]),
        .testTarget(name: "SGEMMessagingTests", dependencies: ["SGEMTestSupport", "SGEMMessaging", "SGEMNotices", "SGEMAccounts", "SGEMCompany", "SGEMApp", "SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMStore", "SGEMSupport", "SGEMShell"]),
        .testTarget(name: "SGEMRealtimeTests", dependencies: ["SGEMTestSupport", "SGEMRealtime", "SGEMMessaging", "SGEMNotices", "SGEMAccounts", "SGEMCompany", "SGEMApp", "SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMStore", "SGEMSupport", "SGEMShell", "CLinux"]),
        .testTarget(name: "SGEMHolidaysTests", dependencies: ["SGEMTestSupport", "SGEMHolidays", "SGEMRealtime", "SGEMMessaging", "SGEMNotices", "SGEMAccounts", "SGEMCompany", "SGEMApp", "SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMStore", "SGEMSupport", "SGEMShell", "CLinux"]),
        .testTarget(name: "SGEMTranslationTests", dependencies: ["SGEMTestSupport", "SGEMTranslation", "SGEMRealtime", "SGEMMessaging", "SGEMNotices", "SGEMAccounts", "SGEMCompany", "SGEMApp", "SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMStore", "SGEMSupport", "SGEMShell", "CLinux"]),
        .testTarget(name: "SGEMPushTests", dependencies: ["SGEMTestSupport", "SGEMPush", "SGEMRealtime", "SGEMMessaging", "SGEMNotices", "SGEMAccounts", "SGEMCompany", "SGEMHolidays", "SGEMApp", "SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMStore", "SGEMSupport", "SGEMShell", "CLinux"]),
        .testTarget(name: "SGEMCompanyTests", dependencies: ["SGEMTestSupport", "SGEMCompany", "SGEMAccounts", "SGEMApp", "SGEMCore", "SGEMContracts", "SGEMHTTP", "SGEMStore", "SGEMSupport", "SGEMShell"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "SGEMAppTests", dependencies: ["SGEMTestSupport", "CTestSupport", "SGEMApp", "SGEMSupport", "SGEMHTTP", "SGEMStore", "sgem-server"]),
    ],
    swiftLanguageModes: [.v6]
)
