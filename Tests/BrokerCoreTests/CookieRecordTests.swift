import BrokerCore
import Testing

/// `CookieRecord`: the `kind = cookies` document (interface.md §7).
@Suite struct CookieRecordTests {
  @Test func roundTrip() throws {
    let record = CookieRecord(
      cookies: [
        StoredCookie(name: "FedAuth", value: Secret("F1"), domain: "contoso.sharepoint.com", expires: 10),
        StoredCookie(name: "rtFa", value: Secret("R1"), domain: ".sharepoint.com", path: "/x", expires: 0, httpOnly: false, secure: false),
      ], obtainedAt: 5, expiresOn: 10)
    let encoded = record.encoded()
    #expect(encoded.revealed.contains(#""v":1"#))
    #expect(encoded.revealed.contains(#""http_only":true"#))
    #expect(try CookieRecord.decode(encoded, item: "sp/cookies") == record)
  }

  @Test(arguments: ["", "{}", #"{"v":2,"cookies":[],"obtained_at":1,"expires_on":2}"#, #"{"v":1,"cookies":[],"obtained_at":1,"expires_on":2}"#])
  func badDocumentsAreCorrupt(text: String) {
    #expect(throws: StoreError.corrupt(item: "sp/cookies")) { try CookieRecord.decode(Secret(text), item: "sp/cookies") }
  }

  @Test func descriptionHidesValues() {
    let c = StoredCookie(name: "SPOIDCRL", value: Secret("SENTINEL"), domain: "h", expires: 0)
    #expect(!"\(c)".contains("SENTINEL"))
  }
}
