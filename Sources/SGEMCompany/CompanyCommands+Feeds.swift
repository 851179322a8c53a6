import SGEMCore
import SGEMShell
import SGEMStore
import SGEMSupport

extension CompanyCommands {
    /// `admin company feeds [show [--json]] | set URL… | clear`: the company feed URLs, checked
    /// like `PUT /admin/company/feeds`. A running server fetches new URLs at its next round.
    func feedsCommand() -> Command {
        let openStore = context.openStore
        let services = context.services
        // Changes from the command line are in the audit log too, as from the API.
        let audit: @Sendable () -> (any AuditTrail)? = { services.resolve((any AuditTrail).self) }
        var feeds = CommandRegistry(noun: "feeds verb", helpHint: "admin company feeds --help")
        let show = Command("show", summary: "print the feed URLs with each one's last fetch", usage: "[--json]",
                           options: [.flag("json", "print JSON")]) { args, ctx in
            let list = try await FeedRepository(store: try await openStore()).feeds()
            if args.has("json") { ctx.io.print(try OrderedJSONEncoder.text(Items(items: list.map(FeedStatusView.init)))); return }
            if list.isEmpty { ctx.io.print("no company feeds"); return }
            for feed in list { ctx.io.print(CompanyCommands.describe(feed)) }
        }
        feeds.register(show)
        feeds.register(Command("set", summary: "replace the feed URLs (at most \(FeedURLs.maxCount), http or https); kept URLs keep their entries",
                               usage: "URL…", positionals: 1...100) { args, ctx in
            let urls: [String]
            do { urls = try FeedURLs.checked(args.positionals) } catch let CompanyError.invalid(fields) {
                // "urls[1]" means little on a command line: name the URL itself.
                throw CommandError.failure(fields.sorted { $0.key < $1.key }.map { field, problem in
                    let index = Int(field.dropFirst(5).dropLast()).flatMap { args.positionals.indices.contains($0) ? $0 : nil }
                    return "\(index.map { args.positionals[$0] } ?? "the list") \(problem)"
                }.joined(separator: "; "))
            }
            let saved = try await FeedRepository(store: try await openStore()).replace(with: urls) { db in
                try audit()?.record(FeedURLs.auditRecord(urls, actorID: nil, ip: nil), in: db)
            }
            ctx.io.print("\(saved.count) company feed\(saved.count == 1 ? "" : "s") saved; a running server fetches new ones within --feed-interval")
        })
        feeds.register(Command("clear", summary: "remove every feed URL and the entries read from them") { _, ctx in
            _ = try await FeedRepository(store: try await openStore()).replace(with: []) { db in
                try audit()?.record(FeedURLs.auditRecord([], actorID: nil, ip: nil), in: db)
            }
            ctx.io.print("company feeds cleared")
        })
        let verbs = feeds
        return Command("feeds", summary: "show or change the company feeds shown on Home",
                       usage: "[show [--json] | set URL… | clear]", positionals: 0...100, passThrough: true) { args, ctx in
            let words = args.positionals.isEmpty ? ["show"] : args.positionals
            try await verbs.run(words, context: ctx, prefix: "sgem-server admin company feeds")
        }
    }

    /// `https://example.com/feed.xml  ok  "Example blog"  12 entries  last fetched …`.
    static func describe(_ feed: FeedStatus) -> String {
        var line = "\(feed.url)  \(feed.status)"
        if let title = feed.title { line += "  \"\(title)\"" }
        line += "  \(feed.entryCount) entr\(feed.entryCount == 1 ? "y" : "ies")"
        if let at = feed.lastFetchedAt { line += "  last fetched \(at.rfc3339())" }
        if let error = feed.error, feed.status == "error" { line += "\n  could not be read: \(error)" }
        return line
    }
}
