import BrokerAgent
import BrokerCore
import BrokerHTTP
import BrokerProviders

extension Runtime {
  /// The registry token the docker helper hands out for an Azure Container Registry at `host`
  /// (interface.md §5): inside the agent, the one its memory keeps (`RegistryTokenCache`: one
  /// exchange per account and registry until five minutes before the token's `exp`), else
  /// exchanged now from the access token `accessToken` gives (asked only for an exchange).
  /// - Throws: `RegistryError`; what `accessToken` throws; `HTTPError.libraryUnavailable`;
  ///   `ForwardRefusal` (a forwarded request for an account not forwarded);
  ///   `ConfigError` (exit 64).
  func registryToken(host: String, account: AccountConfig, accessToken: () async throws -> Secret) async throws
    -> RegistryToken
  {
    let key = RegistryTokenKey(account: account.name, host: host)
    let kept = try context.agent?.registryTokens(for: account)
    if let kept, let token = kept.cached(key, account: account) {
      diagnostics.note("the agent's memory had the registry token of '\(account.name)' for '\(host)'")
      return token
    }
    let curl = CurlTransport(environment: context.environment)
    let transport: any HTTPTransport =
      diagnostics.isOn ? DiagnosedTransport(curl, diagnostics: diagnostics) : curl
    let exchange = AzureRegistryExchange(
      transport: transport, caFiles: try config().settings.caFiles(account), time: SystemTime())
    let bearer = try await accessToken()
    let (name, tenant) = (account.name, account.tenant)
    let run: @Sendable () async throws -> RegistryToken = {
      try await exchange.exchange(host: host, account: name, accessToken: bearer, fallbackTenant: tenant)
    }
    let token: RegistryToken
    if let kept {
      token = try await kept.token(for: key, account: account, exchange: run)
    } else {
      token = try await run()
    }
    diagnostics.note(
      "exchanged the token of '\(account.name)' for a registry token of '\(host)'"
        + (token.servedUntil.map { ", kept in memory for \($0 - SystemTime().now) s" } ?? ", not kept (no exp)"))
    return token
  }
}
