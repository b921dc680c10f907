import BrokerCore
import Foundation
import Testing

@testable import BrokerStore

/// Discovery documents on disk (interface.md §2.1): private files, at most 24 h old.
@Suite("DiscoveryFileCache")
struct DiscoveryFileCacheTests {
  let dir = TempDir()
  var cacheDir: String { dir.path + "/cache/tokenbroker" }
  let issuer = "https://sso.example.test/realms/main"
  let body = Array(#"{"issuer":"https://sso.example.test/realms/main"}"#.utf8)

  @Test func aSavedDocumentReadsBackInPrivateFilesUntilItIsADayOld() async throws {
    let cache = DiscoveryFileCache(directory: cacheDir)
    await cache.save(issuer: issuer, document: CachedDocument(body: body, fetchedAt: 1000))
    #expect(mode(of: cacheDir) == 0o700)
    #expect(mode(of: try #require(cache.path(of: issuer))) == 0o600)
    #expect(await cache.load(issuer: issuer, now: 1000 + 86399) == CachedDocument(body: body, fetchedAt: 1000))
    #expect(await cache.load(issuer: issuer, now: 1000 + 86400) == nil)
    #expect(await cache.load(issuer: issuer + "/other", now: 1000) == nil)
  }

  @Test func aDamagedOrWideOpenFileCountsAsNone() async throws {
    let cache = DiscoveryFileCache(directory: cacheDir)
    await cache.save(issuer: issuer, document: CachedDocument(body: body, fetchedAt: 1000))
    let path = try #require(cache.path(of: issuer))
    chmod(path, 0o644)
    #expect(await cache.load(issuer: issuer, now: 1000) == nil)
    try "not a number\n{}".write(toFile: path, atomically: false, encoding: .utf8)
    chmod(path, 0o600)
    #expect(await cache.load(issuer: issuer, now: 1000) == nil)
  }

  @Test func theMemoryLayerKeepsTheDisksFetchTime() async throws {
    let disk = DiscoveryFileCache(directory: cacheDir)
    await disk.save(issuer: issuer, document: CachedDocument(body: body, fetchedAt: 1000))
    let layered = LayeredDiscoveryCache(memory: MemoryDiscoveryCache(), backing: disk)
    #expect(await layered.load(issuer: issuer, now: 2000)?.fetchedAt == 1000)
    // A day after the disk's fetch the memory copy is stale too, not a day after it was copied.
    #expect(await layered.load(issuer: issuer, now: 1000 + 86400) == nil)
  }
}
