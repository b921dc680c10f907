import BrokerCore
import BrokerWire

/// `tokenbroker lock` (interface.md §3): the agent forgets the encrypted store's key, and every
/// access token it cached from the store, as soon as the refreshes under way have stored their
/// rotated refresh tokens (bug-cases-3.md X16). No agent running: it is locked already.
enum LockCommand {
  static func run(_ args: [String], runtime: Runtime) async throws -> ExitStatus {
    let a = try Arguments(args, command: "lock")
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
      runtime.context.say("\(path) was locked already (no agent holds its key)")
      return .success
    } catch StoreError.encryptedMissing {
      runtime.context.say("there is no encrypted token store at \(path) yet; nothing to lock")
      return .success
    }
    runtime.context.say("locked \(path): the agent holds neither its key nor tokens from it now ('tokenbroker unlock' to go on)")
    return .success
  }
}
