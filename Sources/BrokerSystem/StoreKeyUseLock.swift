import BrokerCore
import BrokerWire
import Glibc

/// Orders refreshes against the agent dropping the encrypted store's key (bug-cases-3.md X16): a
/// rotated refresh token can only be written while the key is held, and the provider has already
/// invalidated the old one when the reply arrives, so the key must not go (`unlock-timeout`,
/// `tokenbroker lock`, `agent stop`) between "read the refresh token" and "store the new one".
///
/// Two `flock` files beside the agent's socket, `SOCKET.key.lock` and `SOCKET.key.gate` (0600, in
/// the socket's 0700 directory), each hold on its own open file description, so tasks of one
/// process exclude each other as processes do:
/// - a refresh (`whileUsing`) takes the gate shared, the lock shared, lets go of the gate, and
///   keeps the lock until its body ends;
/// - the agent (`exclusively`) takes the gate exclusive, so no new refresh starts, then the lock
///   exclusive, which it gets once every refresh already started has stored its result.
/// A refresh that waited at the gate then reads a store that is locked: it fails (exit 5) before
/// any request reaches the provider.
public struct StoreKeyUseLock: Sendable {
  /// `SOCKET.key.lock`.
  public let path: String
  /// `SOCKET.key.gate`.
  public let gatePath: String
  /// Seconds either side waits for the other (a refresh is bounded by HTTP timeouts).
  public let patience: Double

  @TaskLocal static var held = false

  /// - Parameter socketPath: the agent's socket (`BrokerPaths.agentSocket`, `AgentEndpoint`).
  public init(socketPath: String, patience: Double = 120) {
    path = socketPath + ".key.lock"
    gatePath = socketPath + ".key.gate"
    self.patience = patience
  }

  /// Runs `body` while no key can be dropped. Without the socket's directory (no agent ever ran
  /// there, so none holds a key) `body` runs unlocked; within one task a second call does not
  /// lock again.
  /// - Returns: nil, without running `body`, when the agent has been dropping the key for
  ///   `patience` seconds (the store is then locked).
  /// - Throws: what `body` throws; `SystemError.call` when a lock file cannot be opened or locked.
  public func whileUsing<T: Sendable>(_ body: () async throws -> T) async throws -> T? {
    if Self.held { return try await body() }
    guard let gate = try LockFiles.openUnlessNoDirectory(gatePath) else { return try await body() }
    var gateOpen = true
    defer { if gateOpen { close(gate) } }
    let deadline = MonotonicClock.seconds + patience
    guard try await LockFiles.take(gate, LOCK_SH, path: gatePath, until: deadline) else { return nil }
    let use = try LockFiles.open(path)
    defer { close(use) }
    guard try await LockFiles.take(use, LOCK_SH, path: path, until: deadline) else { return nil }
    close(gate)  // held shared, the lock keeps any dropper out; new refreshes may start
    gateOpen = false
    return try await Self.$held.withValue(true) { try await body() }
  }

  /// Runs `body` (dropping the key) once every refresh already started has ended, or after
  /// `patience` seconds all the same (a refresh stuck for that long is not waited for longer);
  /// refreshes that begin meanwhile wait for `body` to end. Never fails: a lock file that cannot
  /// be opened, or cancellation, runs `body` at once.
  /// - Returns: `body`'s value, and whether every refresh had ended.
  public func exclusively<T>(_ body: () async -> T) async -> (value: T, drained: Bool) {
    guard let gate = try? LockFiles.openUnlessNoDirectory(gatePath) else { return (await body(), false) }
    defer { close(gate) }
    let deadline = MonotonicClock.seconds + patience
    guard (try? await LockFiles.take(gate, LOCK_EX, path: gatePath, until: deadline)) == true,
      let use = try? LockFiles.openUnlessNoDirectory(path)
    else { return (await body(), false) }
    defer { close(use) }
    let drained = (try? await LockFiles.take(use, LOCK_EX, path: path, until: deadline)) == true
    return (await body(), drained)
  }
}

/// The refresh lock of `store = encrypted-file`: each account's `base` lock, then `keyUse` shared,
/// so the agent keeps the key until the refresh has stored its rotated token.
public struct KeyHeldRefreshLock: RefreshLock {
  let base: any RefreshLock
  let keyUse: StoreKeyUseLock
  /// The encrypted file, for the error when the agent is dropping its key.
  let storePath: String

  public init(base: any RefreshLock, keyUse: StoreKeyUseLock, storePath: String) {
    self.base = base
    self.keyUse = keyUse
    self.storePath = storePath
  }

  /// - Throws: what `body` and `base` throw; `StoreError.encryptedLocked` when the agent has been
  ///   dropping the key for `keyUse.patience` seconds; `SystemError.call`.
  public func withLock<T: Sendable>(account: String, _ body: () async throws -> T) async throws -> T {
    try await base.withLock(account: account) {
      guard let value = try await keyUse.whileUsing(body) else { throw StoreError.encryptedLocked(path: storePath) }
      return value
    }
  }

  /// The holds of `base` (a throttle concerns the account, not the key).
  public func hold(account: String, now: Int64) -> RefreshHold? { base.hold(account: account, now: now) }
  public func setHold(_ hold: RefreshHold?, account: String) { base.setHold(hold, account: account) }
}
