import BrokerCore
import BrokerStore
import Testing

/// A `StoreError` met by the agent reaches the caller as the very same error.
@Suite struct StoreErrorWireTests {
  @Test func everyStoreErrorCrossesTheWire() {
    let all: [StoreError] = [
      .locked, .unlockDismissed, .unlockUnanswered(seconds: 60), .itemsWithheld, .sessionRefused(detail: "d"),
      .noCollection, .unavailable(detail: "d"), .timedOut(seconds: 10), .readBackMismatch,
      .corrupt(item: "i"), .file(path: "/p", detail: "d"), .backend(detail: "d"), .encryptedLocked(path: "/p"),
      .wrongPassphrase(path: "/p"), .encryptedFileDamaged(path: "/p", detail: "is truncated"), .crypto(detail: "d"),
      .agentUnreachable(socket: "/s"), .encryptedMissing(path: "/p"),
      .agentServesAnotherStore(path: "/p", served: "/q", socket: "/s"), .createdMeanwhile(path: "/p"),
      .outOfMemory(path: "/p", neededMiB: 256, room: "RLIMIT_AS (ulimit -v) leaves about 100 MiB", newStore: false),
      .outOfMemory(path: "/p", neededMiB: 24, room: "", newStore: true),
    ]
    for e in all { #expect(StoreErrorWire.error(StoreErrorWire.lines(e), path: "/x") == e) }
  }
}
