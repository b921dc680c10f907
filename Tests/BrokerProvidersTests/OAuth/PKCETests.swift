import BrokerCore
import Testing

@testable import BrokerProviders

@Suite struct PKCETests {
  /// RFC 7636 Appendix B: the verifier, the SHA-256 octets of its ASCII form, and the challenge.
  static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
  static let digest: [UInt8] = [
    19, 211, 30, 150, 26, 26, 216, 236, 47, 22, 177, 12, 76, 152, 46, 8, 118, 168, 120, 173, 109, 241, 68, 86, 110,
    225, 137, 74, 203, 112, 249, 195,
  ]
  static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

  @Test func appendixBVector() {
    let pkce = PKCE(verifier: Secret(Self.verifier)) { input in
      #expect(input == Array(PKCETests.verifier.utf8))
      return PKCETests.digest
    }
    #expect(pkce.challenge == Self.challenge)
    #expect(PKCE.method == "S256")
  }

  @Test func randomVerifiersAre43UnreservedCharactersAndDiffer() {
    let a = PKCE.random { _ in PKCETests.digest }
    let b = PKCE.random { _ in PKCETests.digest }
    #expect(a.verifier.revealed.count == 43)  // RFC 7636 §4.1: 43–128
    #expect(a.verifier.revealed.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
    #expect(a.verifier != b.verifier)
    #expect("\(a.verifier)" == "<redacted>")
  }

  @Test func base64URLHasNoPaddingAndURLSafeCharacters() {
    #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
    #expect(Base64URL.encode([]) == "")
    #expect(Base64URL.encode(Array("f".utf8)) == "Zg")
  }

  @Test func statesAreLongAndUnique() {
    let states = (0..<50).map { _ in BrowserSignInRequest.randomState() }
    #expect(Set(states).count == 50)
    #expect(states.allSatisfy { $0.count == 43 })
  }
}
