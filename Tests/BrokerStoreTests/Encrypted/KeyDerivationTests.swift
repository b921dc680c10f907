import BrokerCore
import Testing

@testable import BrokerStore

/// bug-cases-3.md X15: memory is checked before the passphrase, new stores take what fits, and a
/// failed allocation is "not enough memory", never a wrong passphrase.
@Suite("KeyDerivation")
struct KeyDerivationTests {
  static let mib: UInt64 = 1 << 20
  let path = "/home/u/.local/share/tokenbroker/tokens.enc"

  func room(_ mib: UInt64) -> MemoryRoom { MemoryRoom(bytes: mib * Self.mib, limit: "RLIMIT_AS (ulimit -v)") }

  @Test func anExistingStoreThatDoesNotFitIsRefusedNamingBoth() throws {
    let moderate = KDFParameters.fresh(opsLimit: 3, memLimit: 256 * Self.mib)
    try KeyDerivation.check(moderate, room: .unlimited, path: path)
    try KeyDerivation.check(moderate, room: room(256), path: path)
    let error = #expect(throws: StoreError.self) { try KeyDerivation.check(moderate, room: room(160), path: path) }
    #expect(error == .outOfMemory(path: path, neededMiB: 256, room: "RLIMIT_AS (ulimit -v) leaves about 160 MiB", newStore: false))
    let text = error?.description ?? ""
    #expect(text.hasPrefix("could not derive the key: not enough memory (this store needs 256 MiB) for the encrypted token store \(path)"))
    #expect(text.contains("RLIMIT_AS (ulimit -v) leaves about 160 MiB"))
    #expect(!text.contains("passphrase"))
  }

  @Test func newStoresTakeTheStrongestLevelThatFits() throws {
    func levels(_ r: MemoryRoom) throws -> [UInt64] {
      try KeyDerivation.newStoreCandidates(room: r, path: path).map { $0.memLimit >> 20 }
    }
    #expect(try levels(.unlimited) == [64, 32, 16, 8])
    #expect(try levels(room(80)) == [64, 32, 16, 8])
    #expect(try levels(room(79)) == [32, 16, 8])
    #expect(try levels(room(30)) == [8])
    let candidates = try KeyDerivation.newStoreCandidates(room: room(56), path: path)
    #expect(candidates.map(\.opsLimit) == [3, 3, 3])
    #expect(Set(candidates.map(\.salt)).count == 1)
    let error = #expect(throws: StoreError.self) { try KeyDerivation.newStoreCandidates(room: room(20), path: path) }
    #expect(error == .outOfMemory(path: path, neededMiB: 24, room: "RLIMIT_AS (ulimit -v) leaves about 20 MiB", newStore: true))
    #expect(error?.description.contains("(a new store needs at least 24 MiB)") == true)
    #expect(error?.description.contains("nothing was created") == true)
  }

  @Test func aKeyDerivesWithTheParametersGiven() async throws {
    let parameters = KDFParameters.fresh(opsLimit: 1, memLimit: 8 << 20)
    let key = try await KeyDerivation.derive(passphrase: Array("pw".utf8), parameters: parameters, path: path)
    #expect(key.parameters == parameters)
    let again = try await KeyDerivation.deriveNew(passphrase: Array("pw".utf8), candidates: [parameters], path: path)
    #expect(again.hexDigits() == key.hexDigits())
  }

  @Test func aFailedAllocationIsNotEnoughMemory() {
    let error = StoreError.outOfMemory(path: path, neededMiB: 256, room: "", newStore: false)
    #expect(error.description.contains("could not derive the key: not enough memory (this store needs 256 MiB)"))
    #expect(!error.description.contains("wrong passphrase"))
  }

  @Test func wrongPassphraseHasItsOwnWording() {
    let text = StoreError.wrongPassphrase(path: path).description
    #expect(text.hasPrefix("wrong passphrase or damaged file: "))
    #expect(text.contains(path))
    #expect(!text.contains("memory"))
  }
}
