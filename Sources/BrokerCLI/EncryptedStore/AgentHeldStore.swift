import BrokerCore
import BrokerStore
import BrokerWire
import Glibc

/// `store = encrypted-file` outside the agent: every call is an `op=store` request to the agent,
/// which alone holds the key and reads and writes the file (interface.md §7.1), and which forgets
/// its cached access tokens of an account whose sign-in changes here. No agent running means
/// locked (a new agent holds no key), or missing when there is no file at `path`; one that does
/// not answer is `StoreError.agentUnreachable`.
struct AgentHeldStore: SecretStore {
  let socketPath: String
  /// The encrypted file the caller means (the agent refuses to serve another one).
  let path: String
  /// For one request, in ms: a store call may wait up to 10 s for another writer's lock.
  static let bound = 30_000
  /// For `lock` and `agent stop`, in ms: the agent drops the key once the refreshes under way have
  /// stored their tokens, waiting up to `StoreKeyUseLock.patience` (120 s) for them.
  static let dropBound = 130_000

  func load(_ key: ItemKey) async throws -> Secret? {
    // The answer is `found` LF and the document exactly, or nothing.
    let found = Array("found\n".utf8)
    let bytes = try await call(.load, [CredentialField(StoreMessage.Key.item, FileStore.name(of: key))])
    guard bytes.starts(with: found) else { return nil }
    return Secret(String(decoding: bytes.dropFirst(found.count), as: UTF8.self))
  }

  func save(_ key: ItemKey, label: String, secret: Secret) async throws {
    typealias K = StoreMessage.Key
    _ = try await call(
      .save,
      [CredentialField(K.item, FileStore.name(of: key)), CredentialField(K.label, label), CredentialField(K.secret, secret.revealed)])
  }

  func delete(_ key: ItemKey) async throws {
    _ = try await call(.delete, [CredentialField(StoreMessage.Key.item, FileStore.name(of: key))])
  }

  func keys(account: String?) async throws -> [ItemKey] {
    let fields = account.map { [CredentialField(StoreMessage.Key.account, $0)] } ?? []
    return Self.lines(try await call(.keys, fields)).compactMap(FileStore.key(named:))
  }

  func preflightWrite(for key: ItemKey?) async throws { _ = try await call(.preflight, []) }

  /// The salt and limits in the file's header, or nil when there is no store yet (`unlock`).
  func parameters() async throws -> [String] { Self.lines(try await call(.parameters, [])) }

  /// Sends one `store` request; the answer's `out[]` bytes.
  /// - Throws: the agent's `StoreError`; `.encryptedLocked` (`.encryptedMissing`) when no agent runs.
  private func call(_ operation: StoreOperation, _ fields: [CredentialField]) async throws -> [UInt8] {
    typealias K = StoreMessage.Key
    var request = AgentRequest(operation: .store)
    request.store = [CredentialField(K.operation, operation.rawValue), CredentialField(K.path, path)] + fields
    return try await Self.send(request, socketPath: socketPath, path: path)
  }

  /// Sends `request` (`store`, `unlock`, `lock`) and returns the reply's `out[]` bytes.
  static func send(_ request: AgentRequest, socketPath: String, path: String, bound: Int = bound) async throws -> [UInt8] {
    guard let reply = await AgentCall.send(request, to: socketPath, bound: bound) else {
      // No agent (no socket, or a dead agent's socket refusing): none holds a key.
      switch AgentClient.connect(to: socketPath) {
      case .absent: throw exists(path) ? StoreError.encryptedLocked(path: path) : StoreError.encryptedMissing(path: path)
      case .connected(let fd):
        close(fd)
        throw StoreError.agentUnreachable(socket: socketPath)
      case .failed: throw StoreError.agentUnreachable(socket: socketPath)
      }
    }
    guard reply.exit == 0 else {
      throw StoreErrorWire.error(lines(reply.error), path: path)
    }
    return reply.output
  }

  /// True when something is at `path` (ENOENT is the only "no"; one `lstat`).
  static func exists(_ path: String) -> Bool {
    var st = stat()
    return lstat(path, &st) == 0 || errno != ENOENT
  }

  static func lines(_ bytes: [UInt8]) -> [String] {
    guard !bytes.isEmpty else { return [] }
    var text = String(decoding: bytes, as: UTF8.self)
    if text.hasSuffix("\n") { text.removeLast() }
    return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
  }
}
