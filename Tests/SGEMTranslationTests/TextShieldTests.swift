@testable import SGEMTranslation
import Testing

@Suite("Translation: what the provider never touches")
struct TextShieldTests {
    @Test("mentions, links and code become placeholders and come back in place",
          arguments: [
              ("Hi @ana.b, look", "Hi [[0]], look", ["@ana.b"]),
              ("see https://example.com/x?y=1.", "see [[0]].", ["https://example.com/x?y=1"]),
              ("(www.example.org) now", "([[0]]) now", ["www.example.org"]),
              ("run `make test` then ```\nlet x = 1\n``` ok", "run [[0]] then [[1]] ok", ["`make test`", "```\nlet x = 1\n```"]),
              ("mail me at ana@example.com", "mail me at ana@example.com", []),
              ("an unclosed `tick stays", "an unclosed `tick stays", []),
              ("```\nunclosed fence", "[[0]]", ["```\nunclosed fence"]),
              ("Plain words only", "Plain words only", []),
          ])
    func masks(text: String, masked: String, pieces: [String]) {
        let shield = TextShield(text)
        #expect(shield.masked == masked)
        #expect(shield.pieces == pieces)
        #expect(shield.restore(shield.masked) == text)
    }

    @Test("a provider's spacing inside placeholders is tolerated; a lost placeholder is appended, never dropped")
    func restore() {
        let shield = TextShield("Hola @ana mira https://x.example")
        #expect(shield.restore("Hi [[ 0 ]] look [[1]]") == "Hi @ana look https://x.example")
        #expect(shield.restore("Hi [[0]] look") == "Hi @ana look https://x.example")
        #expect(shield.restore("Hi [[7]] [[0]] [[1]]") == "Hi [[7]] @ana https://x.example")
    }

    @Test("only mentions, links, code, digits or emoji: nothing to translate")
    func words() {
        #expect(!TextShield("@ana https://example.com `x` 42 🎉").hasWords)
        #expect(TextShield("ok @ana").hasWords)
        #expect(TextShield("café").hasWords)
    }

    @Test("language codes and provider tags")
    func codes() {
        for good in ["en", "es", "pt-BR", "zh-Hant", "haw"] { #expect(TranslationDesk.isLanguageCode(good), "\(good)") }
        for bad in ["", "e", "EN", "english", "en-", "en_GB", "en-US-x", "e1"] { #expect(!TranslationDesk.isLanguageCode(bad), "\(bad)") }
        #expect(TranslationDesk.languageCode("EN-GB") == "en" && TranslationDesk.languageCode("pt_BR") == "pt")
        #expect(TranslationDesk.languageCode("??") == nil)
    }

    @Test("cache keys differ whenever provider, source, target or text differ, and never collide across the parts")
    func keys() {
        let base = TranslationDesk.key(provider: "deepl", source: "auto", target: "es", text: "hi")
        #expect(base.count == 32)
        #expect(base == TranslationDesk.key(provider: "deepl", source: "auto", target: "es", text: "hi"))
        for other in [TranslationDesk.key(provider: "yandex", source: "auto", target: "es", text: "hi"),
                      TranslationDesk.key(provider: "deepl", source: "en", target: "es", text: "hi"),
                      TranslationDesk.key(provider: "deepl", source: "auto", target: "fr", text: "hi"),
                      TranslationDesk.key(provider: "deepl", source: "auto", target: "es", text: "hi!"),
                      TranslationDesk.key(provider: "deepl", source: "auto", target: "e", text: "shi")] {
            #expect(other != base)
        }
    }
}
