@testable import BrokerAgent
import BrokerCore
import BrokerStore
import BrokerTestSupport
import BrokerWire
import Foundation
import Testing

/// The agent's side of the encrypted store, in-process: unlock checks the key before keeping it,
/// store operations use it, lock forgets it, and a request for another file is refused.
@Suite struct StoreRequestHandlerTests {
  let directory = NSTemporaryDirectory() + "tb-storereq-\(UInt64.random(in: 0..<UInt64.max))"
  var file: String { directory + "/data/tokenbroker/tokens.enc" }
  let parameters = KDFParameters.fresh(opsLimit: 1, memLimit: 8 << 20)

  func handler() -> AgentRequestHandler {
    let environment = ["HOME": directory, "XDG_DATA_HOME": directory + "/data", "XDG_RUNTIME_DIR": directory]
    return requestHandler(cache: TokenCache(time: FakeTime()), environment: environment, stop: { _ in })
  }

  func unlock(_ h: AgentRequestHandler, _ passphrase: String, create: Bool) throws -> AgentRequest {
    var bytes = Array(passphrase.utf8)
    let key = try Sodium.deriveKey(passphrase: &bytes, parameters: parameters)
    typealias K = StoreMessage.Key
    var r = AgentRequest(operation: .unlock)
    r.store = [
      CredentialField(K.path, file), CredentialField(K.key, String(decoding: key.hexDigits(), as: UTF8.self)),
      CredentialField(K.salt, StoreMessage.hex(parameters.salt)), CredentialField(K.opsLimit, "1"),
      CredentialField(K.memLimit, String(8 << 20)), CredentialField(K.create, create ? "1" : "0"),
      CredentialField(K.timeout, "0"),
    ]
    return r
  }

  func store(_ op: StoreOperation, _ fields: [CredentialField] = [], path: String? = nil) -> AgentRequest {
    var r = AgentRequest(operation: .store)
    r.store = [CredentialField(StoreMessage.Key.operation, op.rawValue), CredentialField(StoreMessage.Key.path, path ?? file)] + fields
    return r
  }

  func error(_ reply: AgentReply) -> StoreError {
    StoreErrorWire.error(String(decoding: reply.error, as: UTF8.self).split(separator: "\n").map(String.init), path: file)
  }

  @Test func unlockStoreLockRoundTrip() async throws {
    let h = handler()
    #expect(await h.handle(store(.parameters)) == AgentReply(exit: 0))  // no store yet
    // No file yet: missing, not locked (bug-cases-3.md X17).
    #expect(error(await h.handle(store(.load, [CredentialField("item", "refresh-token:work")]))) == .encryptedMissing(path: file))
    #expect(await h.handle(try unlock(h, "pw", create: true)) == AgentReply(exit: 0))  // the key's memory is locked
    #expect(h.keys.isUnlocked)
    let doc = "{\"v\":1,\"refresh_token\":\"RT\"}"
    let save = store(.save, [CredentialField("item", "refresh-token:work"), CredentialField("label", "l"), CredentialField("secret", doc)])
    #expect(await h.handle(save).exit == 0)
    let loaded = await h.handle(store(.load, [CredentialField("item", "refresh-token:work")]))
    #expect(loaded.output == Array(("found\n" + doc).utf8))
    #expect(await h.handle(store(.load, [CredentialField("item", "refresh-token:other")])).output.isEmpty)
    #expect(await h.handle(store(.keys)).output == Array("refresh-token:work\n".utf8))
    let header = String(decoding: await h.handle(store(.parameters)).output, as: UTF8.self)
    #expect(header == "\(StoreMessage.hex(parameters.salt))\n1\n\(8 << 20)\n")
    var lock = AgentRequest(operation: .lock)
    lock.store = [CredentialField(StoreMessage.Key.path, file)]
    #expect(await h.handle(lock).exit == 0)
    #expect(!h.keys.isUnlocked)
    #expect(error(await h.handle(store(.keys))) == .encryptedLocked(path: file))
  }

  @Test func wrongKeyIsRefusedAndNotKept() async throws {
    let h = handler()
    #expect(await h.handle(try unlock(h, "right", create: true)).exit == 0)
    var lock = AgentRequest(operation: .lock)
    lock.store = [CredentialField(StoreMessage.Key.path, file)]
    _ = await h.handle(lock)
    let before = FileManager.default.contents(atPath: file)
    let reply = await h.handle(try unlock(h, "wrong", create: false))
    #expect(reply.exit == 5)
    #expect(error(reply) == .wrongPassphrase(path: file))
    #expect(!h.keys.isUnlocked)
    #expect(FileManager.default.contents(atPath: file) == before)
  }

  /// bug-cases-3.md X17: the agent serves the store of its own environment only, and says so
  /// naming both files.
  @Test func anotherFileIsNotServed() async throws {
    let h = handler()
    let reply = await h.handle(store(.keys, path: "/elsewhere/tokens.enc"))
    #expect(reply.exit == 5)
    #expect(error(reply) == .agentServesAnotherStore(path: "/elsewhere/tokens.enc", served: file, socket: directory + "/tokenbroker/agent.sock"))
    #expect(!FileManager.default.fileExists(atPath: file))
  }

  /// bug-cases-3.md X17 step 5: a store that appeared after the caller found none is kept, and
  /// the second creation is told to unlock again.
  @Test func aSecondCreationIsToldTheStoreWasCreatedMeanwhile() async throws {
    let h = handler()
    #expect(await h.handle(try unlock(h, "first", create: true)).exit == 0)
    let before = FileManager.default.contents(atPath: file)
    let reply = await h.handle(try unlock(h, "second", create: true))
    #expect(reply.exit == 5)
    #expect(error(reply) == .createdMeanwhile(path: file))
    #expect(FileManager.default.contents(atPath: file) == before)
  }
}
