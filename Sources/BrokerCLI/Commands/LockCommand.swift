import BrokerCore
import BrokerWire

/// `tokenbroker lock` (interface.md §3): the agent forgets the encrypted store's key, and every
/// access token it cached from the store, as soon as the refreshes under way have stored their
/// rotated refresh tokens (bug-cases-3.md X16). No agent running: it is locked already.
enum LockCommand {
  static func run(_ args: [String], runtime: Runtime) async throws -> ExitStatus {
    let a = try Arguments(args, valued: [], flags: [], usage: Help.usage("lock"))
    _ = try a.expectPositionals([])
    let settings = try runtime.config().settings
    guard settings.store == .encryptedFile else {
      throw UsageError(
        "lock is for [broker] store = encrypted-file (this config uses store = \(settings.store.rawValue))", usage: Help.usage("lock"))
    }
    let path = runtime.paths.encryptedTokenFile
    var request = AgentRequest(operation: .lock)
    request.store = [CredentialField(StoreMessage.Key.path, path)]
    do {
      // Answered once the refreshes under way have stored their rotated tokens (bounded).
      _ = try await AgentHeldStore.send(
        request, socketPath: AgentCommand.endpoint(runtime).socketPath, path: path, bound: AgentHeldStore.dropBound)
    } catch StoreError.encryptedLocked {
      return .success  // no agent: nothing holds the key
    } catch StoreError.encryptedMissing {
      return .success  // no agent, and no store to hold a key for
    }
    runtime.verbose("the agent forgot the key of \(path)")
    return .success
  }
}
