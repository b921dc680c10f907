public import BrokerCore
internal import Dispatch

/// `store = encrypted-file` (interface.md §7.1): the file store's documents, keyed the same way,
/// sealed in `tokens.enc` (`EncryptedFileFormat`) under a key that only the agent holds.
///
/// `key` is asked on every call: nil means locked (`StoreError.encryptedLocked`, or
/// `.encryptedMissing` when there is no file to unlock yet). A file that
/// does not open with the key (truncated, another format, a changed byte) is
/// `StoreError.encryptedFileDamaged` naming it, and is never written over. Writes are
/// read-modify-write under an exclusive `flock` on `tokens.enc.lock`, replacing the file
/// atomically (temporary file, fsync, rename, fsync of the directory) with a fresh nonce, then
/// reading it back; so a crash leaves the old or the new file and concurrent writers (two agents
/// on one file) lose no item. The directory is 0700 and the file 0600, as for the file store.
public final class EncryptedFileStore: SecretStore {
  /// The encrypted file.
  public let path: String
  private let directory: String
  private let key: @Sendable () -> StoreKey?
  private let lockTimeout: Double
  private let queue = DispatchQueue(label: "tokenbroker.store.encrypted")

  /// - Parameters:
  ///   - path: the file (normally `BrokerPaths.encryptedTokenFile`).
  ///   - lockTimeout: seconds to wait for another process's lock before failing.
  ///   - key: the unlocked key, or nil while locked.
  public init(path: String, lockTimeout: Double = 10, key: @escaping @Sendable () -> StoreKey?) {
    self.path = path
    let slash = path.lastIndex(of: "/")
    directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    self.lockTimeout = lockTimeout
    self.key = key
  }

  /// - Throws: `StoreError.encryptedLocked`, `.encryptedMissing`, `.encryptedFileDamaged`, `.file`.
  public func load(_ item: ItemKey) async throws -> Secret? {
    try await run { key, files throws(StoreError) in
      try self.readItems(files, key)[FileStore.name(of: item)].map(Secret.init)
    }
  }

  /// - Throws: as `load`; `.readBackMismatch` when the file does not read back as written.
  public func save(_ item: ItemKey, label: String, secret: Secret) async throws {
    let name = FileStore.name(of: item)
    try await modify(readBack: (name, secret.revealed)) { $0[name] = secret.revealed }
  }

  /// - Throws: as `load`.
  public func delete(_ item: ItemKey) async throws {
    try await modify { $0[FileStore.name(of: item)] = nil }
  }

  /// - Throws: as `load`.
  public func keys(account: String?) async throws -> [ItemKey] {
    try await run { key, files throws(StoreError) in
      try self.readItems(files, key).keys.compactMap(FileStore.key(named:))
        .filter { account == nil || $0.account == account }
        .sorted { $0.description < $1.description }
    }
  }

  /// Unlocked, and the file (if any) opens with the key (for any `key`).
  public func preflightWrite(for key: ItemKey?) async throws {
    _ = try await run { key, files throws(StoreError) in try self.readItems(files, key) }
  }

  // MARK: unlocking (the agent, before it keeps a key)

  /// The salt and limits in the file's header, or nil when there is no file yet.
  /// - Throws: `.encryptedFileDamaged` (truncated, another format), `.file`.
  public func parameters() async throws -> KDFParameters? {
    try await blocking { files throws(StoreError) -> KDFParameters? in
      guard try files.checkDirectory(self.directory), let bytes = try files.read(self.path) else { return nil }
      do throws(EncryptedFileFormat.Problem) {
        return try EncryptedFileFormat.header(of: bytes).parameters
      } catch { throw self.damaged(error) }
    }
  }

  /// Checks that `candidate` opens the file, or creates an empty store sealed with it when
  /// `create` and there is none. Changes nothing when it does not open.
  /// - Throws: `.wrongPassphrase`; `.createdMeanwhile` (`create`, and a file appeared since the
  ///   caller found none); `.encryptedMissing` (not `create`, and the file went);
  ///   `.encryptedFileDamaged` (truncated, another format), `.file`.
  public func open(with candidate: StoreKey, create: Bool) async throws {
    _ = try await blocking { files throws(StoreError) -> Bool in
      try files.ensureDirectory(self.directory)
      return try files.withLock(self.path + ".lock", timeout: self.lockTimeout) { () throws(StoreError) -> Bool in
        guard let bytes = try files.read(self.path) else {
          guard create else { throw StoreError.encryptedMissing(path: self.path) }
          try self.write([:], files, candidate)
          return true
        }
        guard !create else { throw StoreError.createdMeanwhile(path: self.path) }
        do throws(EncryptedFileFormat.Problem) {
          _ = try self.decode(EncryptedFileFormat.open(bytes, key: candidate))
        } catch .unauthenticated {
          throw StoreError.wrongPassphrase(path: self.path)
        } catch { throw self.damaged(error) }
        return false
      }
    }
  }

  // MARK: file access (on `queue`)

  private func run<T: Sendable>(_ body: @escaping @Sendable (StoreKey, PrivateFiles) throws(StoreError) -> T)
    async throws -> T
  {
    guard let key = key() else {
      let path = self.path
      let exists = try await blocking { files throws(StoreError) in files.exists(path) }
      throw exists ? StoreError.encryptedLocked(path: path) : StoreError.encryptedMissing(path: path)
    }
    return try await blocking { files throws(StoreError) in try body(key, files) }
  }

  private func blocking<T: Sendable>(_ body: @escaping @Sendable (PrivateFiles) throws(StoreError) -> T) async throws -> T {
    let files = PrivateFiles(reportPath: path)
    return try await BlockingQueue.run(on: queue) { try body(files) }
  }

  private func modify(readBack: (name: String, text: String)? = nil, _ change: @escaping @Sendable (inout [String: String]) -> Void)
    async throws
  {
    _ = try await run { key, files throws(StoreError) -> Bool in
      try files.ensureDirectory(self.directory)
      return try files.withLock(self.path + ".lock", timeout: self.lockTimeout) { () throws(StoreError) -> Bool in
        let before = try self.readItems(files, key)
        var after = before
        change(&after)
        guard after != before else { return false }
        try self.write(after, files, key)
        if let readBack, try self.readItems(files, key)[readBack.name] != readBack.text {
          throw StoreError.readBackMismatch
        }
        return true
      }
    }
  }

  private func write(_ items: [String: String], _ files: PrivateFiles, _ key: StoreKey) throws(StoreError) {
    var plaintext = Array(JSONText.encode(FileStore.TokenFile(v: 1, items: items)).utf8)
    defer { Sodium.zero(&plaintext) }
    try files.writeAtomically(path, directory: directory, bytes: EncryptedFileFormat.seal(plaintext, key: key))
  }

  private func readItems(_ files: PrivateFiles, _ key: StoreKey) throws(StoreError) -> [String: String] {
    guard try files.checkDirectory(directory), let bytes = try files.read(path) else { return [:] }
    do throws(EncryptedFileFormat.Problem) {
      return try decode(EncryptedFileFormat.open(bytes, key: key))
    } catch { throw damaged(error) }
  }

  private func decode(_ plaintext: [UInt8]) throws(EncryptedFileFormat.Problem) -> [String: String] {
    var plaintext = plaintext
    defer { Sodium.zero(&plaintext) }
    guard let file = JSONText.decode(FileStore.TokenFile.self, bytes: plaintext), file.v == 1 else { throw .foreign }
    return file.items
  }

  private func damaged(_ problem: EncryptedFileFormat.Problem) -> StoreError {
    switch problem {
    case .truncated: return .encryptedFileDamaged(path: path, detail: "is truncated")
    case .foreign: return .encryptedFileDamaged(path: path, detail: "is not a tokenbroker encrypted store of format 1")
    case .limits(let ops, let mem):
      let memory = mem >= 1 << 20 ? "\(mem >> 20) MiB" : "\(mem) bytes"
      let allowed = "at most \(KDFParameters.maxMemLimit >> 20) MiB and \(KDFParameters.maxOpsLimit) passes are allowed"
      return .encryptedFileDamaged(
        path: path, detail: "asks Argon2id for \(memory) and \(ops) passes (\(allowed)), so it was not opened")
    case .unauthenticated:
      return .encryptedFileDamaged(path: path, detail: "fails authentication (changed since it was written, or sealed with another passphrase)")
    }
  }
}
