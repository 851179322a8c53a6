import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// The `translation` module: providers chosen at run time, a cache, translating messages and
/// notices on request, and chats shown in the reader's language as messages arrive.
public struct TranslationModule: Module {
    public let id: ModuleID = "translation"
    public var dependencies: [ModuleID] { ["system", "accounts"] }

    public init() {}
}
