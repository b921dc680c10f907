import BrokerCore
import Synchronization
import Testing

@testable import BrokerAgent

/// interface.md §8.1: the notification's text, and no attempt at all where none may be made.
@Suite struct SignInNoticesTests {
  @Test func theNotificationNamesAccountProviderAndIdentityAndOffersTheActions() {
    let n = SignInNotices.notice(account: "work", provider: "azure", identity: "a<b>&c@example.test", actions: true)
    #expect(n.appName == "tokenbroker" && n.summary == "Sign-in needed: work")
    #expect(n.body == "azure: a&lt;b&gt;&amp;c@example.test")
    #expect(n.actions.map(\.key) == ["default", "signin", "dismiss"])
    #expect(n.actions.map(\.label) == ["Sign in", "Sign in", "Not now"])
    #expect(n.urgency == 2 && n.resident && n.expireTimeout == 0)
  }

  @Test func withoutActionsTheBodyNamesTheLogin() {
    let n = SignInNotices.notice(account: "work", provider: "google", identity: nil, actions: false)
    #expect(n.body == "google\nRun: tokenbroker login work")
    #expect(n.actions.isEmpty)
  }

  @Test(arguments: [("", NotifyMode.auto), ("unix:path=/nonexistent", .off)])
  func noBusOrNotifyOffMakesNoAttempt(bus: String, mode: NotifyMode) async throws {
    let notices = SignInNotices(busAddress: bus, log: { _ in })
    var settings = BrokerSettings()
    settings.notify = mode
    let asked = Mutex(0)
    notices.signInNeeded(account: "work", provider: "azure", settings: settings, states: MemoryAccountStates()) {
      asked.withLock { $0 += 1 }
      return .signInNeeded(SignInNeed(since: 1, reason: .rejected))
    }
    #expect(!notices.outstanding)
    try await Task.sleep(for: .milliseconds(50))
    #expect(asked.withLock { $0 } == 0)
  }

  /// A bus that cannot be reached: the state stays, the agent is not kept alive for it, and no
  /// second attempt follows within the cooldown.
  @Test func anUnreachableBusLeavesTheStateAndIsNotAskedAgain() async throws {
    let notices = SignInNotices(busAddress: "unix:path=/nonexistent/bus", log: { _ in })
    let states = MemoryAccountStates()
    let need = SignInNeed(since: 1, reason: .rejected)
    states.record(.signInNeeded(need), account: "work")
    let asked = Mutex(0)
    for _ in 0..<2 {
      notices.signInNeeded(account: "work", provider: "azure", settings: BrokerSettings(), states: states) {
        asked.withLock { $0 += 1 }
        return .signInNeeded(need)
      }
      for _ in 0..<500 where notices.outstanding { try await Task.sleep(for: .milliseconds(10)) }
    }
    #expect(!notices.outstanding)
    #expect(asked.withLock { $0 } == 1)
    #expect(states.recorded(account: "work") == .signInNeeded(need))
  }
}
