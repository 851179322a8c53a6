import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport

/// What the admin configured: which provider, where, with which key, how long to wait.
struct ProviderSettings: Sendable, Equatable {
    /// "libretranslate", "deepl", "yandex" or "none".
    var provider: String
    /// The provider's base URL; empty for the provider's public default (DeepL, Yandex).
    var url: String
    var apiKey: String?
    var timeout: Duration

    static let names = ["libretranslate", "deepl", "yandex", "none"]
}

/// Builds the translator for the configured provider.
enum Providers {
    /// The translator for `settings.provider`, calling out through the shared `client` with
    /// `settings.timeout` per call; `NoTranslator` for "none" or a name it does not know. Making
    /// one does no I/O: a missing URL or key shows on the first call, as a `TranslationFailure`.
    static func translator(for settings: ProviderSettings, client: HTTPClient) -> any Translator {
        switch settings.provider {
        case "libretranslate": LibreTranslate(settings, client: client)
        case "deepl": DeepL(settings, client: client)
        case "yandex": Yandex(settings, client: client)
        default: NoTranslator()
        }
    }
}

/// Translation switched off: every call fails with `translation_disabled`.
struct NoTranslator: Translator {
    var provider: String { "none" }
    func translate(_ request: TranslationRequest) async throws(TranslationFailure) -> TranslationResult {
        throw TranslationFailure(.translationDisabled, "Translation is switched off: an admin can choose a provider in Settings.")
    }
    func languages() async throws(TranslationFailure) -> [TranslationLanguage] {
        throw TranslationFailure(.translationDisabled, "Translation is switched off: an admin can choose a provider in Settings.")
    }
}
