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

/// interface.md §8.1: what is and is not a dismissal, and one flow per notification.
@Suite struct SignInNoticesEventTests {
  let need = SignInNeed(since: 1, reason: .rejected)

  func tracked() -> (SignInNotices, MemoryAccountStates, Flows) {
    let time = FakeClock()
    let notices = SignInNotices(busAddress: "", time: time, log: { _ in })
    let states = MemoryAccountStates()
    states.record(.signInPending(need), account: "work")
    let flows = Flows()
    notices.onSignIn { account in flows.list.withLock { $0.append(account) } }
    notices.track(account: "work", id: 7, need: need, provider: "azure", cooldown: 900, states: states) { .signInPending(self.need) }
    return (notices, states, flows)
  }

  @Test func aCloseByTheUserWithoutAnActionIsADismissal() {
    let (notices, states, flows) = tracked()
    notices.handle(.closed(id: 7, reason: 2))
    #expect(states.recorded(account: "work") == .cooldown(need, until: FakeClock.now + 900))
    #expect(flows.list.withLock { $0 }.isEmpty && !notices.outstanding)
  }

  @Test func aCloseRightAfterAClickIsNoDismissalAndTwoClicksStartOneFlow() {
    let (notices, states, flows) = tracked()
    notices.handle(.actionInvoked(id: 7, action: "default"))
    notices.handle(.actionInvoked(id: 7, action: "signin"))
    notices.handle(.closed(id: 7, reason: 2))
    #expect(states.recorded(account: "work") == .signInPending(need))
    #expect(flows.list.withLock { $0 } == ["work"])
    #expect(notices.outstanding, "the flow's end settles it")
  }

  @Test(arguments: [UInt32(1), 3, 4]) func otherReasonsChangeNoState(reason: UInt32) {
    let (notices, states, _) = tracked()
    notices.handle(.closed(id: 7, reason: reason))
    #expect(states.recorded(account: "work") == .signInPending(need))
  }

  @Test func anotherIdIsNotOurs() {
    let (notices, states, _) = tracked()
    notices.handle(.closed(id: 8, reason: 2))
    #expect(states.recorded(account: "work") == .signInPending(need))
    #expect(notices.outstanding)
  }

  @Test func aFlowThatFailsStartsTheCooldown() async {
    let (notices, states, _) = tracked()
    notices.handle(.actionInvoked(id: 7, action: "default"))
    await notices.flowEnded(account: "work", succeeded: false)
    #expect(states.recorded(account: "work") == .cooldown(need, until: FakeClock.now + 900))
    #expect(!notices.outstanding)
  }
}

/// The flows a click started, by account.
final class Flows: Sendable {
  let list = Mutex<[String]>([])
}

/// A clock that stands still.
struct FakeClock: TimeSource {
  static let now: Int64 = 1_700_000_000
  var now: Int64 { Self.now }
  func sleep(seconds: Double) async throws {}
}
