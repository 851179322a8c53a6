import SGEMHTTP

/// The settings of the one outbound HTTP client (feeds, translation providers, push): declared by
/// the system module, read here by every place that makes a client, the command line included.
public enum OutboundSettings {
    /// Certificate authorities trusted for outbound HTTPS instead of the system's store: a
    /// self-hosted LibreTranslate behind a company CA.
    public static let caFile = Setting("outbound-ca-file", .path, default: nil,
                                       "PEM file of the certificate authorities trusted for outbound HTTPS (default: the system's CA store)")

    /// Internal destinations outbound calls may reach after all (a LibreTranslate on the same box).
    public static let allow = Setting("outbound-allow", .string, default: nil,
                                      "comma-separated hosts, addresses or CIDR blocks, each with an optional :port, that outbound calls "
                                          + "may reach although they are internal (e.g. 127.0.0.1:5000)",
                                      check: { value in
                                          do throws(OutboundPolicy.ParseError) {
                                              _ = try OutboundPolicy(allowing: value)
                                              return nil
                                          } catch {
                                              return error.message
                                          }
                                      })

    /// The client configuration `configuration` asks for (checked at start-up, so a bad list
    /// here means nothing is allowed).
    public static func client(_ configuration: Configuration) -> HTTPClient.Configuration {
        var client = HTTPClient.Configuration()
        client.caFile = configuration.string(caFile)
        client.outboundPolicy = (try? OutboundPolicy(allowing: configuration.string(allow) ?? "")) ?? OutboundPolicy()
        return client
    }
}
