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
    static func translator(for settings: ProviderSettings, client: HTTPClient) -> any Translator {
        switch settings.provider {
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
