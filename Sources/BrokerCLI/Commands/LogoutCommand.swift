import BrokerCore

/// `tokenbroker logout ACCOUNT | --all`: deletes every item of the account (or of all accounts)
/// from the store and records it `signed-out` (interface.md §8.1); the grant at the provider
/// stays (interface.md §3). Then git's other credential
/// helpers for the account's hosts are asked to forget the tokens it handed out (`GitForget`).
enum LogoutCommand {
  static func run(_ args: [String], runtime: Runtime) async throws -> ExitStatus {
    let a = try Arguments(args, command: "logout")
    let store = try runtime.store()
    if a.flag("all") {
      _ = try a.expectPositionals([])
      var forget: [GitForget] = []
      for account in (try? runtime.config().accounts) ?? [] { forget.append(await GitForget.collect(account: account.name, runtime: runtime)) }
      let keys = try await store.keys(account: nil)
      for key in keys { try await store.delete(key) }
      let names = Set(keys.map(\.account) + ((try? runtime.config().accounts) ?? []).map(\.name))
      for name in names.sorted() { try recordSignedOut(name, runtime: runtime) }
      for f in forget { await f.run(runtime: runtime) }
      runtime.context.say("signed out of every account (\(keys.count) items removed)")
      return .success
    }
    let name = try a.expectPositionals(["ACCOUNT"])[0]
    let forget = await GitForget.collect(account: name, runtime: runtime)
    let removed = try await signOut(name, store: store)
    // Nothing stored and no such account: most likely a misspelt name, not a signed-out account.
    if removed == 0, let config = try? runtime.config(), config.account(named: name) == nil {
      throw config.unknownAccount(name)
    }
    try recordSignedOut(name, runtime: runtime)
    await forget.run(runtime: runtime)
    runtime.context.say(
      removed == 0 ? "'\(name)' was not signed in; nothing to remove" : "signed out of '\(name)' (\(removed) items removed)")
    return .success
  }

  /// Records `account` as signed out by the user (interface.md §8.1: the same answer as any
  /// account not signed in, and no notification). - Throws: `ConfigError`.
  static func recordSignedOut(_ account: String, runtime: Runtime) throws {
    try runtime.services().accountStates().record(.signedOut(since: SystemTime().now), account: account)
  }

  /// Deletes every item of `account` and checks that none is left. A call that was already under
  /// way (a `token get` storing a rotated refresh token or caching an access token) may write
  /// after the first pass: its items are deleted too, in up to `passes` passes; items that stay
  /// after those are a keyring that does not delete.
  /// - Returns: how many items were removed.
  /// - Throws: `StoreError`.
  static func signOut(_ account: String, store: any SecretStore, passes: Int = 3) async throws -> Int {
    var removed = 0
    for _ in 0..<passes {
      let keys = try await store.keys(account: account)
      if keys.isEmpty { return removed }
      for key in keys { try await store.delete(key) }
      removed += keys.count
    }
    guard try await store.keys(account: account).isEmpty else {
      throw StoreError.backend(detail: "items of '\(account)' remain after deleting them \(passes) times")
    }
    return removed
  }
}
