public import BrokerCore
internal import Dispatch

/// The opt-in plaintext store (`store = file`, interface.md §2): one JSON file,
/// `{"items":{KEY:DOCUMENT,…},"v":1}`, at `BrokerPaths.tokenFile`.
///
/// KEY is `KIND:ACCOUNT` or, for access tokens, `access-token:ACCOUNT:SCOPES` (in ACCOUNT, `%` and
/// `:` are written `%25` and `%3A`); DOCUMENT is the same JSON text the Secret Service item holds.
/// The directory is created 0700 and the file 0600; a directory or file with group/other access
/// or another owner is refused (`StoreError.file` says what to chmod). Writes are atomic (temporary
/// file, fsync, rename) and done under an exclusive `flock` on `tokens.json.lock`, so concurrent
/// processes never lose each other's items. Every write calls `warn` with one line.
public final class FileStore: SecretStore {
  /// The token file.
  public let path: String
  private let directory: String
  private let warn: @Sendable (String) -> Void
  private let lockTimeout: Double
  private let queue = DispatchQueue(label: "tokenbroker.store.file")

  /// - Parameters:
  ///   - path: the token file (normally `BrokerPaths.tokenFile`); its directory is created on the
  ///     first write.
  ///   - lockTimeout: seconds to wait for another process's lock before failing.
  ///   - warn: receives the plaintext warning line on every write (the CLI prints it to stderr).
  public init(path: String, lockTimeout: Double = 10, warn: @escaping @Sendable (String) -> Void) {
    self.path = path
    let slash = path.lastIndex(of: "/")
    directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    self.lockTimeout = lockTimeout
    self.warn = warn
  }

  /// The store at `paths.tokenFile` (`$XDG_DATA_HOME/tokenbroker/tokens.json`, interface.md §2).
  public convenience init(paths: BrokerPaths, warn: @escaping @Sendable (String) -> Void) {
    self.init(path: paths.tokenFile, warn: warn)
  }

  /// The warning emitted on every write, without the `tokenbroker: warning: ` prefix the printer adds.
  public var warning: String {
    "storing tokens in plaintext at \(path) (store = file); use the Secret Service to keep them encrypted"
  }

  /// - Throws: `StoreError.file` (permissions, I/O, a file that is not tokenbroker JSON).
  public func load(_ key: ItemKey) async throws -> Secret? {
    try await run { files throws(StoreError) in
      try self.readItems(files)[FileStore.name(of: key)].map(Secret.init)
    }
  }

  /// - Throws: `StoreError.file`; `.readBackMismatch` when the file does not read back as written.
  public func save(_ key: ItemKey, label: String, secret: Secret) async throws {
    let name = FileStore.name(of: key)
    try await modify(readBack: (name, secret.revealed)) { items in items[name] = secret.revealed }
  }

  /// - Throws: `StoreError.file`.
  public func delete(_ key: ItemKey) async throws {
    try await modify { items in items[FileStore.name(of: key)] = nil }
  }

  /// - Throws: `StoreError.file`.
  public func keys(account: String?) async throws -> [ItemKey] {
    try await run { files throws(StoreError) in
      try self.readItems(files).keys.compactMap(FileStore.key(named:))
        .filter { account == nil || $0.account == account }
        .sorted { $0.description < $1.description }
    }
  }

  // MARK: file access (on `queue`)

  private func run<T: Sendable>(_ body: @escaping @Sendable (PrivateFiles) throws(StoreError) -> T) async throws -> T {
    let files = PrivateFiles(reportPath: path)
    return try await BlockingQueue.run(on: queue) { try body(files) }
  }

  /// Read-modify-write under the lock; writes (and warns) only when the items changed. With
  /// `readBack`, the file is read again (still under the lock) and must hold that item.
  private func modify(
    readBack: (name: String, text: String)? = nil, _ change: @escaping @Sendable (inout [String: String]) -> Void
  ) async throws {
    let changed = try await run { files throws(StoreError) -> Bool in
      try files.ensureDirectory(self.directory)
      return try files.withLock(self.path + ".lock", timeout: self.lockTimeout) { () throws(StoreError) -> Bool in
        let before = try self.readItems(files)
        var after = before
        change(&after)
        guard after != before else { return false }
        let text = JSONText.encode(TokenFile(v: 1, items: after)) + "\n"
        try files.writeAtomically(self.path, directory: self.directory, bytes: Array(text.utf8))
        if let readBack, try self.readItems(files)[readBack.name] != readBack.text {
          throw StoreError.readBackMismatch
        }
        return true
      }
    }
    if changed { warn(warning) }
  }

  /// The document of the file (and the plaintext of the encrypted store).
  struct TokenFile: Codable {
    var v: Int
    var items: [String: String]
  }

  private func readItems(_ files: PrivateFiles) throws(StoreError) -> [String: String] {
    guard try files.checkDirectory(directory), let bytes = try files.read(path), !bytes.isEmpty else { return [:] }
    guard let file = JSONText.decode(TokenFile.self, bytes: bytes), file.v == 1 else {
      throw StoreError.file(path: path, detail: "it is not a tokenbroker token file; move it away")
    }
    return file.items
  }

  // MARK: item names

  /// The item's name in the file: `KIND:ACCOUNT[:SCOPES]` (`%` and `:` of ACCOUNT escaped).
  public static func name(of key: ItemKey) -> String {
    var account = ""
    for c in key.account {
      switch c {
      case "%": account += "%25"
      case ":": account += "%3A"
      default: account.append(c)
      }
    }
    return "\(key.kind.rawValue):\(account)" + (key.scopes.map { ":" + $0 } ?? "")
  }

  /// The key of a name `name(of:)` made, or nil.
  public static func key(named name: String) -> ItemKey? {
    let parts = name.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
    guard parts.count >= 2, let kind = ItemKind(rawValue: String(parts[0])),
      (kind == .accessToken) == (parts.count == 3)
    else { return nil }
    var account = ""
    var rest = parts[1][...]
    while let c = rest.first {
      if rest.hasPrefix("%25") {
        account += "%"
        rest = rest.dropFirst(3)
      } else if rest.hasPrefix("%3A") {
        account += ":"
        rest = rest.dropFirst(3)
      } else {
        account.append(c)
        rest = rest.dropFirst()
      }
    }
    return ItemKey(account: account, kind: kind, scopes: parts.count == 3 ? String(parts[2]) : nil)
  }
}
