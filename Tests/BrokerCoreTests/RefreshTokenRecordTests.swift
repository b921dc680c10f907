import BrokerCore
import Testing

/// The refresh-token document (interface.md §7) with the client that obtained the token.
@Suite struct RefreshTokenRecordTests {
  @Test func clientIDRoundTrips() throws {
    let r = RefreshTokenRecord(
      refreshToken: Secret("1//RT"), identity: "u@example.test", tenant: nil, obtainedAt: 1_700_000_000,
      clientID: "5678-tv.apps.googleusercontent.com")
    let text = r.encoded().revealed
    #expect(text.contains(#""client_id":"5678-tv.apps.googleusercontent.com""#))
    #expect(try RefreshTokenRecord.decode(r.encoded(), item: "x") == r)
  }

  @Test func documentsWithoutClientIDStayReadable() throws {
    let old = Secret(#"{"v":1,"refresh_token":"RT1","identity":"u","tenant":"t","oid":"o","obtained_at":5}"#)
    let r = try RefreshTokenRecord.decode(old, item: "x")
    #expect(r.clientID == nil)
    #expect(r.refreshToken == Secret("RT1"))
    #expect(!RefreshTokenRecord(refreshToken: Secret("RT"), identity: nil, tenant: nil, obtainedAt: 1).encoded().revealed
      .contains("client_id"))
  }

  /// bug-cases-3 X04: the sign-in's `sub` and `nonce`, kept for the refresh checks.
  @Test func test_X04_subjectAndNonceRoundTrip() throws {
    let r = RefreshTokenRecord(
      refreshToken: Secret("RT"), identity: "u", tenant: nil, obtainedAt: 1, clientID: "cli", subject: "S", nonce: "N1")
    #expect(try RefreshTokenRecord.decode(r.encoded(), item: "x") == r)
    let old = try RefreshTokenRecord.decode(Secret(#"{"v":1,"refresh_token":"RT1","obtained_at":5}"#), item: "x")
    #expect(old.subject == nil && old.nonce == nil)
  }
}

/// The access-token document with the ID token of the same reply (bug-cases-3.md X08).
@Suite struct AccessTokenRecordTests {
  @Test func test_X08_theIDTokenAndItsExpiryRoundTrip() throws {
    let r = AccessTokenRecord(
      accessToken: Secret("AT"), expiresOn: 3600, scopes: ["openid"], obtainedAt: 0, idToken: Secret("a.b.c"),
      idTokenExpiresOn: 300)
    #expect(r.encoded().revealed.contains(#""id_token":"a.b.c","id_token_expires_on":300"#))
    #expect(try AccessTokenRecord.decode(r.encoded(), item: "x") == r)
  }

  @Test func documentsWithoutAnIDTokenOrWithoutItsExpiryHaveNone() throws {
    for text in [#"{"v":1,"access_token":"AT","expires_on":5,"scopes":[]}"#,
                 #"{"v":1,"access_token":"AT","expires_on":5,"scopes":[],"id_token":"a.b.c"}"#] {
      let r = try AccessTokenRecord.decode(Secret(text), item: "x")
      #expect(r.idToken == nil)
      #expect(r.idTokenExpiresOn == nil)
    }
  }
}

/// Every stored document is compact JSON with each control character escaped (interface.md §7):
/// a raw LF or CR in a secret has made gnome-keyring's file unreadable, and the daemon then
/// replaced the whole keyring with an empty one (bug-cases-4.md Y18).
@Suite struct DocumentEncodingTests {
  @Test func test_Y18_noDocumentHoldsARawLineBreak() throws {
    let odd = "a\nb\rc\u{2028}\u{0}"
    let documents = [
      RefreshTokenRecord(
        refreshToken: Secret(odd), identity: odd, tenant: odd, objectID: odd, obtainedAt: 1, clientID: odd, subject: odd,
        nonce: odd, rotations: 2
      ).encoded(),
      AccessTokenRecord(
        accessToken: Secret(odd), expiresOn: 2, scopes: [odd], tokenType: odd, obtainedAt: 1, idToken: Secret(odd),
        idTokenExpiresOn: 2
      ).encoded(),
      CookieRecord(
        cookies: [StoredCookie(name: odd, value: Secret(odd), domain: odd, path: odd, expires: 1)], obtainedAt: 1,
        expiresOn: 2
      ).encoded(),
    ]
    for document in documents {
      let bytes = Array(document.revealed.utf8)
      #expect(!bytes.contains(0x0A) && !bytes.contains(0x0D) && !bytes.contains(0x00))
    }
    #expect(try RefreshTokenRecord.decode(documents[0], item: "x").refreshToken == Secret(odd))
  }

  /// A stored document's times at the edge of Int64 (a damaged or planted item) are bounded when
  /// read, so `expiresOn - now` and the like cannot overflow.
  @Test func extremeStoredTimesAreBounded() throws {
    let refresh = try RefreshTokenRecord.decode(
      Secret(#"{"v":1,"refresh_token":"RT","obtained_at":-9223372036854775808,"expires_on":9223372036854775807,"rotations":9223372036854775807}"#),
      item: "x")
    #expect(refresh.obtainedAt == -OutsideTime.limit)
    #expect(refresh.expiresOn == OutsideTime.limit)
    #expect(refresh.rotations == Int(OutsideTime.limit))
    let access = try AccessTokenRecord.decode(
      Secret(#"{"v":1,"access_token":"AT","expires_on":-9223372036854775808,"scopes":[],"obtained_at":9223372036854775807}"#),
      item: "y")
    #expect(access.expiresOn == -OutsideTime.limit)
    #expect(access.obtainedAt == OutsideTime.limit)
    let cookies = try CookieRecord.decode(
      Secret(#"{"v":1,"cookies":[{"name":"n","value":"v","domain":"d","path":"/","expires":9223372036854775807,"http_only":true,"secure":true}],"obtained_at":0,"expires_on":-9223372036854775808}"#),
      item: "z")
    #expect(cookies.cookies.first?.expires == OutsideTime.limit)
    #expect(cookies.expiresOn == -OutsideTime.limit)
  }
}
