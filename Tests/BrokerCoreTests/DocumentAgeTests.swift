import BrokerCore
import Testing

/// The order of two stored documents of one key (`DocumentAge`): what tokenbroker wrote into
/// them, never where the keyring put them.
@Suite struct DocumentAgeTests {
  private func age(_ text: String) -> DocumentAge? { DocumentAge(document: Array(text.utf8)) }

  @Test func obtainedAtThenRotationsThenExpiryOrderDocuments() throws {
    let signIn = try #require(age(#"{"v":1,"refresh_token":"A","obtained_at":100}"#))
    let rotatedInTheSameSecond = try #require(age(#"{"v":1,"refresh_token":"B","obtained_at":100,"rotations":1}"#))
    let rotatedLater = try #require(age(#"{"v":1,"refresh_token":"C","obtained_at":101,"rotations":1}"#))
    #expect(signIn < rotatedInTheSameSecond)
    #expect(rotatedInTheSameSecond < rotatedLater)
    let before = try #require(age(#"{"v":1,"access_token":"A","expires_on":500,"scopes":[]}"#))
    let after = try #require(age(#"{"v":1,"access_token":"B","expires_on":900,"scopes":[]}"#))
    #expect(before < after)
  }

  @Test func onlyALaterObtainedAtOrMoreRotationsIsNewerThanAWrittenDocument() throws {
    let hour = try #require(age(#"{"v":1,"access_token":"A","expires_on":3700,"obtained_at":100,"scopes":[]}"#))
    let forced = try #require(age(#"{"v":1,"access_token":"B","expires_on":102,"obtained_at":100,"scopes":[]}"#))
    #expect(!hour.isNewer(than: forced) && !forced.isNewer(than: hour))  // alike: the writer's stands
    let later = try #require(age(#"{"v":1,"access_token":"C","expires_on":103,"obtained_at":101,"scopes":[]}"#))
    #expect(later.isNewer(than: hour) && !hour.isNewer(than: later))
    let old = try #require(age(#"{"v":1,"access_token":"D","expires_on":500,"scopes":[]}"#))
    let older = try #require(age(#"{"v":1,"access_token":"E","expires_on":400,"scopes":[]}"#))
    #expect(old.isNewer(than: older) && !older.isNewer(than: old))
  }

  @Test func aDocumentThatDoesNotTellHasNoAge() {
    #expect(age("not json") == nil)
    #expect(age(#"{"v":1,"cookies":[]}"#) == nil)
  }

  /// A rotated token's record comes after its predecessor's even within one second and when the
  /// wall clock was stepped back meanwhile.
  @Test func aRotatedRecordIsNewerThanTheOneItReplaces() throws {
    let signIn = RefreshTokenRecord(refreshToken: Secret("RT1"), identity: "u", tenant: "t", obtainedAt: 1000)
    for now: Int64 in [1000, 990, 1200] {
      let rotated = signIn.rotated(to: Secret("RT2"), now: now)
      #expect(rotated.refreshToken == Secret("RT2") && rotated.identity == "u" && rotated.rotations == 1)
      #expect(rotated.obtainedAt == max(now, 1000))
      let (a, b) = (age(signIn.encoded().revealed), age(rotated.encoded().revealed))
      #expect(try #require(a) < #require(b))
      #expect(try RefreshTokenRecord.decode(rotated.encoded(), item: "x") == rotated)
    }
    #expect(!signIn.encoded().revealed.contains("rotations"))
  }
}
