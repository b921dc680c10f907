import BrokerCore
import Testing

@Suite struct ExpiryPolicyTests {
  @Test func theMarginIsCappedAtHalfTheLifetime() {
    #expect(ExpiryPolicy.needed(refreshMargin: 300, minValid: nil, lifetime: 3600) == 300)
    #expect(ExpiryPolicy.needed(refreshMargin: 300, minValid: nil, lifetime: 200) == 100)
    #expect(ExpiryPolicy.needed(refreshMargin: 300, minValid: nil, lifetime: 500) == 250)
    #expect(ExpiryPolicy.needed(refreshMargin: 300, minValid: nil, lifetime: nil) == 300)  // unknown: not capped
    #expect(ExpiryPolicy.needed(refreshMargin: 300, minValid: nil, lifetime: 0) == 300)
  }

  @Test func aTokenAtItsExpirySecondIsNeverGoodEnough() {
    #expect(ExpiryPolicy.needed(refreshMargin: 300, minValid: nil, lifetime: 1) == 1)
    #expect(ExpiryPolicy.needed(refreshMargin: 0, minValid: nil, lifetime: 3600) == 1)
  }

  @Test func minValidIsNeverCapped() {
    #expect(ExpiryPolicy.needed(refreshMargin: 300, minValid: 250, lifetime: 200) == 250)
    #expect(ExpiryPolicy.needed(refreshMargin: 300, minValid: 50, lifetime: 200) == 100)
  }

  @Test func warnsOnlyBelowTheMargin() {
    #expect(ExpiryPolicy.shortLifetimeWarning(account: "work", lifetime: 300, refreshMargin: 300) == nil)
    let w = ExpiryPolicy.shortLifetimeWarning(account: "work", lifetime: 200, refreshMargin: 300)
    #expect(w?.contains("200 s") == true)
    #expect(w?.contains("refresh-margin (300 s)") == true)
    #expect(w?.contains("100 s") == true)
  }

  @Test func accessTokenRecordsKeepWhenTheyWereObtained() throws {
    let r = AccessTokenRecord(accessToken: Secret("AT"), expiresOn: 1200, scopes: ["a"], obtainedAt: 1000)
    let back = try AccessTokenRecord.decode(r.encoded(), item: "x")
    #expect(back == r)
    #expect(back.lifetime == 200)
    let old = try AccessTokenRecord.decode(Secret(#"{"v":1,"access_token":"AT","expires_on":5,"scopes":[]}"#), item: "x")
    #expect(old.obtainedAt == nil && old.lifetime == nil)
  }
}
