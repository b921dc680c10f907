import BrokerCore

/// `tokenbroker logout ACCOUNT | --all`: deletes every item of the account (or of all accounts)
/// from the store; the grant at the provider stays (interface.md §3).
enum LogoutCommand {
  static func run(_ args: [String], runtime: Runtime) async throws -> ExitStatus {
    let usage = Help.usage("logout")
    let a = try Arguments(args, valued: [], flags: ["all"], usage: usage)
    let store = try runtime.store()
    if a.flag("all") {
      _ = try a.expectPositionals([])
      let keys = try await store.keys(account: nil)
      for key in keys { try await store.delete(key) }
      runtime.context.say("signed out of every account (\(keys.count) items removed)")
      return .success
    }
    let name = try a.expectPositionals(["ACCOUNT"])[0]
    let removed = try await signOut(name, store: store)
    runtime.context.say(
      removed == 0 ? "'\(name)' was not signed in; nothing to remove" : "signed out of '\(name)' (\(removed) items removed)")
    return .success
  }

  /// Deletes every item of `account` and checks that none is left.
  /// - Returns: how many items were removed.
  static func signOut(_ account: String, store: any SecretStore) async throws -> Int {
    let keys = try await store.keys(account: account)
    for key in keys { try await store.delete(key) }
    guard try await store.keys(account: account).isEmpty else {
      throw StoreError.backend(detail: "items of '\(account)' remain after deleting them")
    }
    return keys.count
  }
}
