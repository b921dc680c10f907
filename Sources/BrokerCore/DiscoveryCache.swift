/// Where fetched discovery documents (OpenID Connect Discovery §4, RFC 8414 §3) are kept, so a
/// warm `token get` fetches none (interface.md §2.1). The agent keeps them in memory for its
/// lifetime, every process on disk under `$XDG_CACHE_HOME/tokenbroker/`; either way for at most
/// `CachedDocument.maxAge` seconds.
public protocol DiscoveryCache: Sendable {
  /// The document kept for `issuer` if it was fetched less than `maxAge` seconds before `now`
  /// (Unix seconds), else nil. Never throws: an unreadable cache is an empty one.
  func load(issuer: String, now: Int64) async -> CachedDocument?
  /// Keeps `document` for `issuer`. Failures are ignored (it is a cache).
  func save(issuer: String, document: CachedDocument) async
}

/// A discovery document's body as fetched, and when.
public struct CachedDocument: Sendable, Equatable {
  /// How long a document is trusted: 24 hours.
  public static let maxAge: Int64 = 86400

  public var body: [UInt8]
  /// Unix seconds.
  public var fetchedAt: Int64

  public init(body: [UInt8], fetchedAt: Int64) {
    self.body = body
    self.fetchedAt = fetchedAt
  }

  /// Fetched less than `maxAge` seconds before `now`, and not in the future (a clock set back).
  public func isFresh(now: Int64) -> Bool { now - fetchedAt < Self.maxAge && fetchedAt <= now + 300 }
}

/// A cache in this process's memory.
public actor MemoryDiscoveryCache: DiscoveryCache {
  /// The process-wide cache: in the agent it lives as long as the agent does.
  public static let shared = MemoryDiscoveryCache()

  private var entries: [String: CachedDocument] = [:]

  public init() {}

  public func load(issuer: String, now: Int64) async -> CachedDocument? {
    guard let entry = entries[issuer] else { return nil }
    guard entry.isFresh(now: now) else {
      entries[issuer] = nil
      return nil
    }
    return entry
  }

  public func save(issuer: String, document: CachedDocument) async { entries[issuer] = document }
}

/// Memory first, then `backing` (the disk), whose hits are copied into memory with their own
/// fetch time; saves go to both.
public struct LayeredDiscoveryCache: DiscoveryCache {
  let memory: any DiscoveryCache
  let backing: any DiscoveryCache

  public init(memory: any DiscoveryCache = MemoryDiscoveryCache.shared, backing: any DiscoveryCache) {
    self.memory = memory
    self.backing = backing
  }

  public func load(issuer: String, now: Int64) async -> CachedDocument? {
    if let document = await memory.load(issuer: issuer, now: now) { return document }
    guard let document = await backing.load(issuer: issuer, now: now) else { return nil }
    await memory.save(issuer: issuer, document: document)
    return document
  }

  public func save(issuer: String, document: CachedDocument) async {
    await memory.save(issuer: issuer, document: document)
    await backing.save(issuer: issuer, document: document)
  }
}
