/// A mail protocol whose clients authenticate with an access token over SASL XOAUTH2 or
/// OAUTHBEARER (RFC 7628): `token get --for`, `[account] mail` (README, "Mail clients").
public enum MailProtocol: String, Sendable, CaseIterable, Comparable {
  case imap, pop, smtp

  public static func < (a: MailProtocol, b: MailProtocol) -> Bool {
    allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
  }
}

/// The scopes a mail token is asked for, by provider (README, "Mail clients"):
/// - azure: Exchange Online's delegated permissions, one per protocol, all of the resource
///   `https://outlook.office.com` (Microsoft's "Authenticate an IMAP, POP or SMTP connection
///   using OAuth"): `IMAP.AccessAsUser.All`, `POP.AccessAsUser.All`, `SMTP.Send`. A Graph token is
///   refused by these servers: the mail token is the same refresh token asked for this resource.
/// - google: `https://mail.google.com/` for every protocol (Google's "OAuth 2.0 Mechanism" for
///   Gmail IMAP and SMTP).
/// - oidc: the account's `mail-scopes`, for every protocol.
/// One token carries the scopes of every protocol in the account's `mail` key as well as the one
/// asked, so IMAP and SMTP clients share one token and one refresh.
public enum MailScopes {
  /// Exchange Online's resource.
  public static let outlookResource = "https://outlook.office.com/"

  /// The azure scope of `p`.
  public static func azure(_ p: MailProtocol) -> String {
    switch p {
    case .imap: return outlookResource + "IMAP.AccessAsUser.All"
    case .pop: return outlookResource + "POP.AccessAsUser.All"
    case .smtp: return outlookResource + "SMTP.Send"
    }
  }

  public static let google = "https://mail.google.com/"

  /// The scopes of the mail token `account` hands a client of `asked`: those of `asked` and of
  /// every protocol in its `mail` key.
  /// - Throws: `ConfigError` (exit 64) for a sharepoint account (its tokens are SharePoint's), and
  ///   for an oidc account without `mail-scopes`.
  public static func scopes(for asked: MailProtocol, account: AccountConfig) throws(ConfigError) -> ScopeSet {
    let protocols = Set(account.mail + [asked]).sorted()
    switch account.provider {
    case .azure: return ScopeSet(protocols.map(azure))
    case .google: return ScopeSet([google])
    case .oidc, .github:
      guard !account.mailScopes.isEmpty else {
        throw .accountKey(account.name, "mail-scopes", "not set; list the scopes the mail server accepts (e.g. mail-scopes = mail)")
      }
      return ScopeSet(account.mailScopes)
    case .sharepoint:
      throw .accountKey(account.name, "provider", "sharepoint accounts have no mail tokens; use their 'via' account with --for")
    }
  }
}
