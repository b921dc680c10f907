/// A mail server: host and port, and whether TLS starts at once (IMAPS 993, POP3S 995) or after
/// STARTTLS (submission 587).
public struct MailServer: Sendable, Equatable {
  public var host: String
  public var port: Int
  /// True for implicit TLS, false for STARTTLS.
  public var implicitTLS: Bool

  public init(host: String, port: Int, implicitTLS: Bool) {
    self.host = host
    self.port = port
    self.implicitTLS = implicitTLS
  }

  /// `HOST[:PORT]` as `mail setup --imap` takes it (IPv6 literals in brackets); the port defaults to
  /// `p`'s standard one. TLS is the protocol's usual kind: implicit for IMAP and POP3 unless the
  /// port is 143 or 110 (those start with STARTTLS), STARTTLS for SMTP unless the port is 465
  /// (submissions, RFC 8314). Nil for an empty host or a bad port.
  public init?(_ text: String, for p: MailProtocol) {
    var host = Substring(text)
    var port = MailServers.standardPort(p)
    if let colon = text.lastIndex(of: ":"), !text.hasSuffix("]") {
      guard let n = Int(text[text.index(after: colon)...]), (1...65535).contains(n) else { return nil }
      port = n
      host = text[..<colon]
    }
    guard !host.isEmpty, !host.contains("/"), !host.contains(" ") else { return nil }
    let implicit: Bool
    switch p {
    case .imap: implicit = port != 143
    case .pop: implicit = port != 110
    case .smtp: implicit = port == 465
    }
    self.init(host: String(host), port: port, implicitTLS: implicit)
  }
}

/// The mail servers of the providers (README, "Mail clients"): Microsoft 365 (`outlook.office365.com`
/// for IMAP and POP, `smtp.office365.com` for SMTP), Outlook.com (personal accounts, azure
/// `tenant = consumers`: `smtp-mail.outlook.com`), Gmail (`imap.gmail.com`, `pop.gmail.com`,
/// `smtp.gmail.com`); IMAP on 993 and POP3 on 995 with TLS, SMTP submission on 587 with STARTTLS.
public enum MailServers {
  public static func standardPort(_ p: MailProtocol) -> Int {
    switch p {
    case .imap: return 993
    case .pop: return 995
    case .smtp: return 587
    }
  }

  /// `account`'s server for `p`, or nil where the provider has none known (oidc and forge accounts).
  public static func server(for p: MailProtocol, account: AccountConfig) -> MailServer? {
    let host: String
    switch (account.provider, p) {
    case (.azure, .imap), (.azure, .pop): host = "outlook.office365.com"
    case (.azure, .smtp): host = account.tenant == "consumers" ? "smtp-mail.outlook.com" : "smtp.office365.com"
    case (.google, .imap): host = "imap.gmail.com"
    case (.google, .pop): host = "pop.gmail.com"
    case (.google, .smtp): host = "smtp.gmail.com"
    case (.oidc, _), (.sharepoint, _), (.github, _): return nil
    }
    return MailServer(host: host, port: standardPort(p), implicitTLS: p != .smtp)
  }
}
