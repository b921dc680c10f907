import BrokerWire

/// The `--verbose` lines of interface.md §3 (`TOKENBROKER_VERBOSE=1` for calls that git, docker
/// and kubectl start): one sink passed down to whoever has something to say, each line written as
/// `tokenbroker: <line>` to standard error. Off, a note costs one branch: its text is an
/// autoclosure that is never evaluated.
///
/// What goes in: config files read, how the host or account was resolved, whether the agent served
/// the call, cache hits and misses with the remaining lifetime, each HTTP request (method, endpoint
/// without query, status, duration), each store operation and its duration, and why a refresh or
/// deletion happened. Never a secret (token, refresh token, code, cookie value, client secret, not
/// even a prefix): callers pass names, scopes, hosts, statuses and numbers only.
public struct Diagnostics: Sendable {
  private let sink: (@Sendable (String) -> Void)?

  /// - Parameter sink: receives each line without prefix or newline; nil: off.
  public init(_ sink: (@Sendable (String) -> Void)?) { self.sink = sink }

  /// No diagnostics.
  public static let off = Diagnostics(nil)

  public var isOn: Bool { sink != nil }

  /// Writes `line` when on.
  public func note(_ line: @autoclosure () -> String) {
    if let sink { sink(line()) }
  }

  /// Runs `body`; when on, notes `what` with the outcome `describe` gives (or the error) and the
  /// time it took in milliseconds.
  public func timed<T>(
    _ what: @autoclosure () -> String, describe: (T) -> String = { _ in "done" }, _ body: () async throws -> T
  ) async rethrows -> T {
    guard let sink else { return try await body() }
    let start = MonotonicClock.milliseconds
    do {
      let value = try await body()
      sink("\(what()): \(describe(value)) in \(Diagnostics.milliseconds(since: start)) ms")
      return value
    } catch {
      sink("\(what()): failed (\(Diagnostics.kind(of: error))) in \(Diagnostics.milliseconds(since: start)) ms")
      throw error
    }
  }

  /// Now on the one monotonic clock (`MonotonicClock`), in milliseconds: a start for
  /// `milliseconds(since:)`.
  public static var now: Int { MonotonicClock.milliseconds }

  /// Whole milliseconds from `start` (`now` then) to now.
  public static func milliseconds(since start: Int) -> Int { MonotonicClock.milliseconds - start }

  /// An error's type name only: its message (shown as the command's last line) may quote a
  /// provider's text.
  static func kind(of error: any Error) -> String { String(describing: type(of: error)) }
}

/// An `HTTPTransport` that notes each request: method, endpoint (no query: scheme, host, path),
/// status and duration. Headers and bodies, where the secrets travel, are never looked at.
public struct DiagnosedTransport: HTTPTransport {
  let base: any HTTPTransport
  public let diagnostics: Diagnostics

  public init(_ base: any HTTPTransport, diagnostics: Diagnostics) {
    self.base = base
    self.diagnostics = diagnostics
  }

  public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
    try await diagnostics.timed("HTTP \(request.description)", describe: { "\($0.status)" }) {
      try await base.send(request)
    }
  }
}

/// A `SecretStore` that notes each operation on an item (account, kind, scopes: attributes, never
/// the secret) with its outcome and duration.
public struct DiagnosedStore: SecretStore {
  let base: any SecretStore
  let diagnostics: Diagnostics

  public init(_ base: any SecretStore, diagnostics: Diagnostics) {
    self.base = base
    self.diagnostics = diagnostics
  }

  public func load(_ key: ItemKey) async throws -> Secret? {
    try await diagnostics.timed("store: read \(key)", describe: { $0 == nil ? "none" : "found" }) { try await base.load(key) }
  }

  public func save(_ key: ItemKey, label: String, secret: Secret) async throws {
    try await diagnostics.timed("store: write \(key)") { try await base.save(key, label: label, secret: secret) }
  }

  public func delete(_ key: ItemKey) async throws {
    try await diagnostics.timed("store: delete \(key)") { try await base.delete(key) }
  }

  public func keys(account: String?) async throws -> [ItemKey] {
    try await diagnostics.timed("store: list \(account.map { "items of " + $0 } ?? "all items")", describe: { "\($0.count)" }) {
      try await base.keys(account: account)
    }
  }

  public func preflightWrite(for key: ItemKey?) async throws {
    try await diagnostics.timed("store: check that it can be written") { try await base.preflightWrite(for: key) }
  }
}
