import BrokerCore
import BrokerStore
import BrokerWire

/// The agent's side of `store = encrypted-file` (interface.md §7.1): `unlock` checks the derived
/// key against the file (or creates the store) before keeping it, `lock` forgets it, and `store`
/// runs one operation on the file with the key held. A save of a refresh token or any delete is
/// followed by `drop` for that account, as the CLI's `AgentNoticeStore` does for the other stores.
struct StoreRequestHandler: Sendable {
  let keys: StoreKeyHolder
  /// The encrypted file of the agent's environment.
  let path: String
  let socketPath: String
  /// Forgets the cached access tokens of an account (and of those signed in through it).
  let drop: @Sendable (String) async -> Void

  func handle(_ request: AgentRequest) async -> AgentReply {
    typealias K = StoreMessage.Key
    let fields = request.store
    func value(_ key: String) -> String? { StoreMessage.value(key, in: fields) }
    // One agent, one store: the one of its own environment (bug-cases-3.md X17). Serving the
    // caller's instead would mix two stores' accounts in one token cache.
    guard let asked = value(K.path), asked == path else {
      return failure(.agentServesAnotherStore(path: value(K.path) ?? "", served: path, socket: socketPath))
    }
    do {
      switch request.operation {
      case .lock:
        await keys.drop()
        return AgentReply(exit: 0)
      case .unlock:
        let key = try await unlock(value)
        // `unlock` warns when the key could not be kept out of swap (`RLIMIT_MEMLOCK`).
        return AgentReply(exit: 0, output: key.isLocked ? [] : Array("\(StoreMessage.keyNotLocked)\n".utf8))
      default:
        guard let operation = value(K.operation).flatMap(StoreOperation.init(rawValue:)) else {
          return failure(.file(path: path, detail: "the request names no store operation; update tokenbroker"))
        }
        return AgentReply(exit: 0, output: try await run(operation, value))
      }
    } catch let error as StoreError {
      return failure(error)
    } catch {
      return failure(.file(path: path, detail: "unexpected error (\(type(of: error)))"))
    }
  }

  private func unlock(_ value: (String) -> String?) async throws -> StoreKey {
    typealias K = StoreMessage.Key
    guard let salt = value(K.salt).flatMap(StoreMessage.bytes(hex:)), let ops = value(K.opsLimit).flatMap({ UInt32($0) }),
      let mem = value(K.memLimit).flatMap({ UInt64($0) }), let timeout = value(K.timeout).flatMap({ Int($0) }),
      let key = value(K.key).flatMap({ StoreKey(hex: Array($0.utf8), parameters: KDFParameters(salt: salt, opsLimit: ops, memLimit: mem)) })
    else { throw StoreError.file(path: path, detail: "the unlock request is malformed; update tokenbroker") }
    try await EncryptedFileStore(path: path, key: { nil }).open(with: key, create: value(K.create) == "1")
    keys.hold(key, path: path, seconds: timeout)
    return key
  }

  private func run(_ operation: StoreOperation, _ value: (String) -> String?) async throws -> [UInt8] {
    typealias K = StoreMessage.Key
    let keys = self.keys
    let path = self.path
    let store = EncryptedFileStore(path: path, key: { keys.key(for: path) })
    func item() throws -> ItemKey {
      guard let item = value(K.item).flatMap(FileStore.key(named:)) else {
        throw StoreError.file(path: path, detail: "the request names no valid item; update tokenbroker")
      }
      return item
    }
    switch operation {
    case .load:
      guard let secret = try await store.load(try item()) else { return [] }
      return Array("found\n".utf8) + Array(secret.revealed.utf8)
    case .save:
      let key = try item()
      try await store.save(key, label: value(K.label) ?? "", secret: Secret(value(K.secret) ?? ""))
      if key.kind == .refreshToken { await drop(key.account) }
      return []
    case .delete:
      let key = try item()
      do { try await store.delete(key) } catch {
        await drop(key.account)
        throw error
      }
      await drop(key.account)
      return []
    case .keys:
      let names = try await store.keys(account: value(K.account)).map(FileStore.name(of:))
      return Array(names.map { $0 + "\n" }.joined().utf8)
    case .preflight:
      try await store.preflightWrite()
      return []
    case .parameters:
      guard let p = try await store.parameters() else { return [] }
      return Array("\(StoreMessage.hex(p.salt))\n\(p.opsLimit)\n\(p.memLimit)\n".utf8)
    }
  }

  private func failure(_ error: StoreError) -> AgentReply {
    AgentReply(exit: ExitStatus.storeUnavailable.rawValue, error: Array(StoreErrorWire.lines(error).map { $0 + "\n" }.joined().utf8))
  }
}
