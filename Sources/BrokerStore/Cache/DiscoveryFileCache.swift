public import BrokerCore
internal import Dispatch

/// Discovery documents on disk (interface.md §2.1): one file per issuer,
/// `DIRECTORY/discovery-ISSUER.json` with the issuer form-encoded (RFC 6749 Appendix B), holding
/// `FETCHED_AT\nBODY` (Unix seconds, then the document as fetched). The directory is created 0700,
/// files 0600, replaced atomically; an unreadable, foreign-owned or stale file counts as none.
public struct DiscoveryFileCache: DiscoveryCache {
  /// Normally `BrokerPaths.cacheDirectory` (`$XDG_CACHE_HOME/tokenbroker`).
  public let directory: String
  private static let queue = DispatchQueue(label: "tokenbroker.cache.discovery")

  public init(directory: String) { self.directory = directory }

  /// The file of `issuer`, or nil when its name would be too long for a file system.
  func path(of issuer: String) -> String? {
    let name = "discovery-" + FormEncoding.escape(issuer) + ".json"
    return name.utf8.count <= 240 ? directory + "/" + name : nil
  }

  public func load(issuer: String, now: Int64) async -> CachedDocument? {
    guard let path = path(of: issuer) else { return nil }
    let files = PrivateFiles(reportPath: path)
    let bytes = try? await BlockingQueue.run(on: Self.queue) { try? files.read(path) }
    guard let bytes = bytes ?? nil, let newline = bytes.firstIndex(of: UInt8(ascii: "\n")),
      let fetchedAt = Int64(String(decoding: bytes[..<newline], as: UTF8.self))
    else { return nil }
    let document = CachedDocument(body: Array(bytes[(newline + 1)...]), fetchedAt: fetchedAt)
    return document.isFresh(now: now) ? document : nil
  }

  public func save(issuer: String, document: CachedDocument) async {
    guard let path = path(of: issuer) else { return }
    let files = PrivateFiles(reportPath: path)
    let directory = self.directory
    let bytes = Array("\(document.fetchedAt)\n".utf8) + document.body
    _ = try? await BlockingQueue.run(on: Self.queue) {
      try files.ensureDirectory(directory)
      try files.writeAtomically(path, directory: directory, bytes: bytes)
    }
  }
}
