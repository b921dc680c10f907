import BrokerCore
import BrokerWire
import Dispatch

/// The store as tokenbroker-core uses it outside the agent: every change to an account's sign-in
/// (a refresh token saved, any item deleted) is followed by `op=drop` for that account to a running
/// agent, so `login`, `logout`, `revoke`, an `invalid_grant` or a git `erase` handled here never
/// leave the agent serving an access token from before (bug-cases.md B20). No agent running is no
/// error. Commands the agent itself runs use the plain store.
struct AgentNoticeStore: SecretStore {
  let base: any SecretStore
  let socketPath: String


  func load(_ key: ItemKey) async throws -> Secret? { try await base.load(key) }

  func save(_ key: ItemKey, label: String, secret: Secret) async throws {
    try await noticing(key.account, when: key.kind == .refreshToken) {
      try await base.save(key, label: label, secret: secret)
    }
  }

  func delete(_ key: ItemKey) async throws {
    try await noticing(key.account, when: true) { try await base.delete(key) }
  }

  func keys(account: String?) async throws -> [ItemKey] { try await base.keys(account: account) }

  func preflightWrite(for key: ItemKey?) async throws { try await base.preflightWrite(for: key) }

  /// Runs `body`, then (also when it failed part way) tells the agent to drop `account`.
  private func noticing(_ account: String, when condition: Bool, _ body: () async throws -> Void) async throws {
    do {
      try await body()
    } catch {
      if condition { await notify(account) }
      throw error
    }
    if condition { await notify(account) }
  }

  /// Sends `op=drop account=…` and waits for the answer.
  private func notify(_ account: String) async {
    _ = await AgentCall.send(AgentRequest(operation: .drop, account: account), to: socketPath)
  }
}

/// One request to a running agent from tokenbroker-core, on a concurrent dispatch queue (never
/// the cooperative pool: connect and poll block; one slow request never holds up another, e.g.
/// `exec`'s Azure and Google endpoints), bounded by `bound`.
enum AgentCall {
  private static let queue = DispatchQueue(label: "tokenbroker.agent.call", attributes: .concurrent)
  /// Bound for one request, in ms (a running agent answers `drop`, `status`, `stop` at once).
  static let bound = 5000

  /// The agent's reply, or nil when none answers within `bound` ms.
  static func send(_ request: AgentRequest, to socketPath: String, bound: Int = bound) async -> AgentReply? {
    await withCheckedContinuation { continuation in
      queue.async { continuation.resume(returning: AgentClient.send(request, to: socketPath, timeoutMilliseconds: bound)) }
    }
  }
}
