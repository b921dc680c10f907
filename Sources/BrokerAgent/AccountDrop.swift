import BrokerCore

/// The one rule for when the agent forgets an account (interface.md §8, bug-cases.md B20):
/// whenever the account's sign-in or configuration may have changed, every access token, ID
/// token, registry token and kept answer the agent holds for it goes at once, and with it those
/// of every account whose tokens derive from that sign-in (SharePoint `via = ACCOUNT`). A fetch
/// running then keeps nothing (`SingleFlightCache.drop`). Nothing of the store is deleted here.
///
/// Every trigger goes through `drop`:
/// - `logout`, `login`, `revoke` and any refresh-token change in a process outside the agent: its
///   `AgentNoticeStore` sends `op=drop` (`AgentRequestHandler.handle`);
/// - a store change the agent makes for another process (`op=store`: `StoreRequestHandler`);
/// - a refresh token deleted inside the agent, by `invalid_grant` or a logout run there (`AgentStore`);
/// - a config edit, by hand or by `account add`/`account remove`, that changes the account's
///   group (`AgentConfigCache.stale`, checked on every request);
/// - a claims challenge, so the next plain request reads the store (`AgentSide.drop`);
/// - the encrypted store locked or the agent's store switched: every account (`account: nil`).
/// A rotated refresh token stored by a refresh is not a trigger: it continues the same sign-in.
public enum AccountDrop {
  /// Forgets `account` and its dependents in `config` (when the config could not be read: the
  /// account alone); `nil`: every account.
  public static func drop(_ account: String?, from cache: TokenCache, config: BrokerConfig?) async {
    guard let account else { return await cache.drop(account: nil) }
    await cache.drop(account: account)
    for dependent in config.map({ dependents(of: account, in: $0) }) ?? [] { await cache.drop(account: dependent) }
  }

  /// The accounts of `config` whose tokens derive from `account`'s sign-in (`via = account`).
  public static func dependents(of account: String, in config: BrokerConfig) -> [String] {
    config.accounts.filter { $0.via == account && $0.name != account }.map(\.name)
  }
}
