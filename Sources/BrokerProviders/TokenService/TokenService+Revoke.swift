import BrokerCore

/// What `revoke` achieved at the provider, before the local sign-out.
public struct RevocationReport: Sendable {
  /// The provider's answer; nil when no refresh token was stored (nothing to revoke).
  public var outcome: RevocationOutcome?
  /// Why the revocation failed (network, 5xx after retries, a refusal); the grant may remain.
  public var failure: ProviderError?
  /// `host[:port]` of the revocation endpoint as configured; nil when there is none or the
  /// provider could not be built.
  public var host: String?

  public init(outcome: RevocationOutcome?, failure: ProviderError?, host: String? = nil) {
    self.outcome = outcome
    self.failure = failure
    self.host = host
  }
}

extension TokenService {
  /// The provider half of `revoke` (interface.md §3; RFC 7009): revokes the stored refresh token
  /// where the provider has an endpoint. Deletes nothing: the caller signs out locally next,
  /// whatever this reports (bug-cases.md B21).
  /// - Returns: the outcome, or the failure (never thrown, so the local sign-out always follows).
  /// - Throws: `ConfigError.unknownAccount`; `StoreError` when the token cannot be read (a locked
  ///   keyring: then nothing is revoked and nothing deleted). A corrupt item counts as none.
  ///   `HTTPError.libraryUnavailable` when no request can be made at all (libcurl missing): then
  ///   nothing was tried, so the caller signs nothing out and the user can revoke once it is
  ///   installed.
  public func revokeAtProvider(account name: String) async throws -> RevocationReport {
    let account = try config.requireAccount(name)
    let record: RefreshTokenRecord?
    do {
      record = try await loadRefreshRecord(name)
    } catch StoreError.corrupt {
      record = nil
    }
    guard let record else { return RevocationReport(outcome: nil, failure: nil) }
    var host: String?
    do {
      let provider = try makeProvider(account)
      host = provider.revocationHost
      let outcome = try await provider.revoke(record.refreshToken, clientID: record.clientID)
      return RevocationReport(outcome: outcome, failure: nil, host: host)
    } catch ProviderError.unsupported {
      return RevocationReport(outcome: .noEndpoint, failure: nil, host: host)
    } catch let error as ProviderError {
      return RevocationReport(outcome: nil, failure: error, host: host)
    }
  }
}
