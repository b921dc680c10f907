import BrokerCore
import Testing

@testable import BrokerProviders

/// `Retry-After` (RFC 9110 §10.2.3) and Okta's `X-Rate-Limit-Reset`, as seconds to wait.
@Suite struct ThrottleWaitTests {
  static let now: Int64 = 784_111_777  // Sun, 06 Nov 1994 08:49:37 GMT

  static func response(_ headers: [(String, String)]) -> HTTPResponse {
    HTTPResponse(status: 429, headers: headers.map { HTTPHeader($0.0, $0.1) }, body: [])
  }

  @Test(arguments: [
    ("Sun, 06 Nov 1994 08:50:07 GMT", 30), ("Sunday, 06-Nov-94 08:50:07 GMT", 30), ("Sun Nov  6 08:50:07 1994", 30),
  ])
  func X07_httpDatesInAllThreeForms(text: String, seconds: Int) {
    #expect(ThrottleWait.seconds(Self.response([("Retry-After", text)]), now: Self.now) == seconds)
  }

  @Test func X07_delaySecondsAreRoundedUpAndBounded() {
    #expect(ThrottleWait.seconds(Self.response([("Retry-After", "12")]), now: Self.now) == 12)
    #expect(ThrottleWait.seconds(Self.response([("Retry-After", "0.2")]), now: Self.now) == 1)
    #expect(ThrottleWait.seconds(Self.response([("Retry-After", "0")]), now: Self.now) == 1)
    #expect(ThrottleWait.seconds(Self.response([("Retry-After", "999999")]), now: Self.now) == ThrottleWait.maxSeconds)
    #expect(ThrottleWait.seconds(Self.response([("Retry-After", "Sun, 06 Nov 1994 08:00:00 GMT")]), now: Self.now) == 1)
  }

  @Test func X07_oktaResetWithoutRetryAfter() {
    #expect(ThrottleWait.seconds(Self.response([("X-Rate-Limit-Reset", "\(Self.now + 45)")]), now: Self.now) == 45)
    #expect(
      ThrottleWait.seconds(
        Self.response([("Retry-After", "5"), ("X-Rate-Limit-Reset", "\(Self.now + 45)")]), now: Self.now) == 5)
  }

  @Test func X07_noHeaderOrGarbageNamesNoWait() {
    #expect(ThrottleWait.seconds(Self.response([]), now: Self.now) == nil)
    #expect(ThrottleWait.seconds(Self.response([("Retry-After", "soon")]), now: Self.now) == nil)
    #expect(ThrottleWait.httpDate("Sun, 36 Nov 1994 08:49:37 GMT") == nil)
  }

  /// A delay or a reset time too large for Int64 arithmetic is the longest hold, never a trap.
  @Test(arguments: ["1e300", "9223372036854775807", "-1e300"])
  func delaysBeyondTheClockAreBounded(text: String) {
    let expected = text.hasPrefix("-") ? 1 : ThrottleWait.maxSeconds
    #expect(ThrottleWait.seconds(Self.response([("Retry-After", text)]), now: Self.now) == expected)
    #expect(ThrottleWait.seconds(Self.response([("X-Rate-Limit-Reset", "-9223372036854775808")]), now: Self.now) == 1)
  }
}
