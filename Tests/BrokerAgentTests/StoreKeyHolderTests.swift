import BrokerAgent
import BrokerStore
import BrokerSystem
import Glibc
import Testing

@Suite struct StoreKeyHolderTests {
  static let parameters = KDFParameters.fresh(opsLimit: 1, memLimit: 8 << 20)
  static func key() -> StoreKey {
    StoreKey(hex: Array(String(repeating: "ab", count: 32).utf8), parameters: parameters)!
  }

  @Test func holdsTheKeyOfOnePathUntilDropped() async {
    let drops = Counter()
    let holder = StoreKeyHolder(onDrop: { drops.add() })
    #expect(holder.key(for: "/a/tokens.enc") == nil)
    #expect(!holder.isUnlocked)
    holder.hold(Self.key(), path: "/a/tokens.enc", seconds: 0)
    #expect(holder.key(for: "/a/tokens.enc") != nil)
    #expect(holder.key(for: "/b/tokens.enc") == nil)
    #expect(holder.isUnlocked)
    await holder.drop()
    #expect(holder.key(for: "/a/tokens.enc") == nil)
    #expect(drops.value == 1)
    await holder.drop()  // nothing held: no error, no second notice
    #expect(drops.value == 1)
  }

  @Test func dropsTheKeyAfterTheTimeoutButNotAReplacementKey() async throws {
    let drops = Counter()
    let holder = StoreKeyHolder(onDrop: { drops.add() })
    holder.hold(Self.key(), path: "/a", seconds: 1)
    holder.hold(Self.key(), path: "/a", seconds: 0)  // a new unlock without timeout replaces it
    try await Task.sleep(for: .milliseconds(1500))
    #expect(holder.isUnlocked)
    holder.hold(Self.key(), path: "/a", seconds: 1)
    var waited = 0
    while holder.isUnlocked && waited < 300 {
      try await Task.sleep(for: .milliseconds(100))
      waited += 1
    }
    #expect(!holder.isUnlocked)
    #expect(drops.value == 1)
  }
}

@Suite struct StoreKeyHolderDrainTests {
  @Test func aLockWaitsForTheRefreshUnderWayToStoreItsToken() async throws {
    let socket = String(cString: mkdtemp(strdup("/tmp/tb-holder-XXXXXX"))) + "/agent.sock"
    let use = StoreKeyUseLock(socketPath: socket, patience: 10)
    let holder = StoreKeyHolder(keyUse: use)
    holder.hold(StoreKeyHolderTests.key(), path: "/a", seconds: 0)
    let entered = Counter()
    async let stored: Bool? = use.whileUsing {
      entered.add()
      try await Task.sleep(for: .milliseconds(300))
      return holder.key(for: "/a") != nil  // the write still has the key
    }
    var waited = 0
    while entered.value == 0 && waited < 2000 {
      try await Task.sleep(for: .milliseconds(10))
      waited += 1
    }
    await holder.drop()
    #expect(try await stored == true)
    #expect(!holder.isUnlocked)
  }
}
